package sched

import (
	"sync"
	"sync/atomic"
	"testing"
)

func mkTasks(n int) []*Task {
	ts := make([]*Task, n)
	for i := range ts {
		ts[i] = &Task{id: uint64(i)}
	}
	return ts
}

func drainInject(q *injectQueue) []*Task {
	var out []*Task
	for t := q.pop(); t != nil; t = q.pop() {
		out = append(out, t)
	}
	return out
}

// TestDequeFIFO: the owner pops in push order, across the ring's wrap.
func TestDequeFIFO(t *testing.T) {
	var q localQueue
	var inj injectQueue
	ts := mkTasks(1000)
	next := 0
	for round := 0; round < 10; round++ {
		for i := 0; i < 100; i++ {
			q.push(ts[round*100+i], &inj)
		}
		if q.len() != 100 {
			t.Fatalf("len %d, want 100", q.len())
		}
		for i := 0; i < 100; i++ {
			x := q.pop()
			if x != ts[next] {
				t.Fatalf("pop %d: got %v want task %d", i, x, next)
			}
			next++
		}
	}
	if q.pop() != nil || q.len() != 0 || inj.len() != 0 {
		t.Fatal("queue not empty")
	}
	for i, x := range q.buf {
		if x != nil {
			t.Fatalf("slot %d still holds a task", i)
		}
	}
}

// TestDequeOverflow: pushing onto a full ring moves the older half plus the
// new task to the inject queue, in order; nothing is lost.
func TestDequeOverflow(t *testing.T) {
	var q localQueue
	var inj injectQueue
	ts := mkTasks(localCap + 1)
	for _, x := range ts[:localCap] {
		q.push(x, &inj)
	}
	if q.len() != localCap || inj.len() != 0 {
		t.Fatalf("full ring: len %d inject %d", q.len(), inj.len())
	}
	q.push(ts[localCap], &inj)
	if q.len() != localCap/2 || inj.len() != localCap/2+1 {
		t.Fatalf("after overflow: len %d inject %d", q.len(), inj.len())
	}
	got := drainInject(&inj)
	for i, x := range got[:localCap/2] {
		if x != ts[i] {
			t.Fatalf("inject[%d] = task %d, want %d", i, x.id, i)
		}
	}
	if got[localCap/2] != ts[localCap] {
		t.Fatal("the new task is not last in the inject queue")
	}
	for i := localCap / 2; i < localCap; i++ {
		if x := q.pop(); x != ts[i] {
			t.Fatalf("pop: got %v want task %d", x, i)
		}
	}
	if q.pop() != nil {
		t.Fatal("ring not empty")
	}
}

// TestDequeSteal: a thief takes half (rounded up), oldest first, returning
// one and putting the rest in its own ring; it refuses when its own ring
// is more than half full.
func TestDequeSteal(t *testing.T) {
	var victim, thief localQueue
	var inj injectQueue
	ts := mkTasks(2 * localCap)
	for _, x := range ts[:9] {
		victim.push(x, &inj)
	}
	got := victim.stealInto(&thief)
	// Half of 9 rounded up = 5: the thief runs the last one it took
	// (ts[4]) and holds ts[0..3].
	if got != ts[4] || thief.len() != 4 || victim.len() != 4 {
		t.Fatalf("steal: got %v, thief %d, victim %d", got, thief.len(), victim.len())
	}
	for i := 0; i < 4; i++ {
		if x := thief.pop(); x != ts[i] {
			t.Fatalf("thief pop %d: %v", i, x)
		}
		if x := victim.pop(); x != ts[5+i] {
			t.Fatalf("victim pop %d: %v", i, x)
		}
	}
	if victim.stealInto(&thief) != nil {
		t.Fatal("stole from an empty ring")
	}
	// One task: a thief takes it.
	victim.push(ts[0], &inj)
	if x := victim.stealInto(&thief); x != ts[0] || thief.len() != 0 || victim.len() != 0 {
		t.Fatalf("single steal: %v", x)
	}
	// A thief with a ring more than half full does not steal.
	for _, x := range ts[:localCap/2+1] {
		thief.push(x, &inj)
	}
	victim.push(ts[300], &inj)
	if x := victim.stealInto(&thief); x != nil {
		t.Fatal("stole into a ring more than half full")
	}
}

// TestDequeStealHammer: the owner pushes and pops while three thieves steal
// (into their own rings, which they drain); every task is seen exactly
// once. Run it under -race.
func TestDequeStealHammer(t *testing.T) {
	n := 500_000
	if raceEnabledInternal || testing.Short() {
		n = 50_000
	}
	ts := mkTasks(n)
	seen := make([]atomic.Int32, n)
	var total atomic.Int64
	see := func(x *Task) {
		if seen[x.id].Add(1) != 1 {
			t.Errorf("task %d seen twice", x.id)
		}
		total.Add(1)
	}
	var owner localQueue
	var inj injectQueue
	var done atomic.Bool
	var wg sync.WaitGroup
	for th := 0; th < 3; th++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine localQueue
			for {
				stop := done.Load()
				if x := owner.stealInto(&mine); x != nil {
					see(x)
				}
				for x := mine.pop(); x != nil; x = mine.pop() {
					see(x)
				}
				if stop && owner.len() == 0 {
					return
				}
			}
		}()
	}
	for i, x := range ts {
		owner.push(x, &inj)
		if i%3 == 0 {
			if y := owner.pop(); y != nil {
				see(y)
			}
		}
		if i%1000 == 0 {
			for y := inj.pop(); y != nil; y = inj.pop() {
				see(y)
			}
		}
	}
	for y := owner.pop(); y != nil; y = owner.pop() {
		see(y)
	}
	done.Store(true)
	wg.Wait()
	for y := inj.pop(); y != nil; y = inj.pop() {
		see(y)
	}
	if total.Load() != int64(n) {
		for i := range seen {
			if seen[i].Load() == 0 {
				t.Errorf("task %d lost", i)
				break
			}
		}
		t.Fatalf("saw %d of %d tasks", total.Load(), n)
	}
}

// TestInjectPopBatch: a batch keeps FIFO order (the first is returned, the
// rest land on the local queue in order) and the counts stay exact.
func TestInjectPopBatch(t *testing.T) {
	var q injectQueue
	var l localQueue
	ts := make([]*Task, 100)
	for i := range ts {
		ts[i] = &Task{id: uint64(i)}
		q.push(ts[i])
	}
	if got := q.popBatch(&l, 10); got != ts[0] {
		t.Fatalf("first of the batch: %v", got.id)
	}
	if q.len() != 90 || l.len() != 9 {
		t.Fatalf("inject %d local %d, want 90 and 9", q.len(), l.len())
	}
	for i := 1; i < 10; i++ {
		if got := l.pop(); got != ts[i] {
			t.Fatalf("local pop %d: %v", i, got.id)
		}
	}
	if got := q.popBatch(&l, 1000); got != ts[10] || q.len() != 0 || l.len() != 89 {
		t.Fatalf("rest: %v inject %d local %d", got.id, q.len(), l.len())
	}
	if q.popBatch(&l, 5) != nil {
		t.Fatal("batch from an empty queue")
	}
}
