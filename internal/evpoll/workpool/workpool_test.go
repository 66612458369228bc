package workpool

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRunsEveryJobBeforeStop: workers start at the first job, and Stop
// returns only after every queued job has run.
func TestRunsEveryJobBeforeStop(t *testing.T) {
	var sum atomic.Int64
	p := New(0, func(j int) { sum.Add(int64(j)) })
	if p.Size() != DefaultSize || p.started != 0 {
		t.Fatalf("size %d, started %d before the first job", p.Size(), p.started)
	}
	for i := 1; i <= 100; i++ {
		p.Go(i)
	}
	if p.started != DefaultSize {
		t.Fatalf("started %d workers, want %d", p.started, DefaultSize)
	}
	p.Stop()
	p.Stop()
	if got := sum.Load(); got != 5050 {
		t.Fatalf("sum of jobs = %d, want 5050", got)
	}
}

// TestGoNeverBlocks: with every worker stuck in a job, Go keeps queueing
// (the queue grows instead of blocking the backend that holds its mutex),
// and the queued jobs run in order once the workers are free.
func TestGoNeverBlocks(t *testing.T) {
	const jobs = 20000
	release := make(chan struct{})
	var order []int
	var last atomic.Int64
	p := New(1, func(j int) {
		if j == 0 {
			<-release
			return
		}
		order = append(order, j) // one worker: no race
		last.Store(int64(j))
	})
	done := make(chan struct{})
	go func() {
		for i := range jobs + 1 {
			p.Go(i)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Go blocked while the worker was busy")
	}
	p.mu.Lock()
	size := len(p.q)
	p.mu.Unlock()
	if size < jobs || size > 2*(jobs+1) {
		t.Fatalf("queue of %d for %d jobs", size, jobs+1)
	}
	close(release)
	p.Stop()
	require.Len(t, order, jobs, "ran %d jobs, want %d", len(order), jobs)
	for i, j := range order {
		if j != i+1 {
			t.Fatalf("job %d ran as number %d", j, i+1)
		}
	}
}

// TestQueueReuse: a pool whose queue has grown queues further jobs without
// allocating.
func TestQueueReuse(t *testing.T) {
	p := New(2, func(int) {})
	defer p.Stop()
	for i := range 64 {
		p.Go(i)
	}
	for p.pending() > 0 {
		time.Sleep(time.Millisecond)
	}
	if n := testing.AllocsPerRun(100, func() { p.Go(1) }); n != 0 {
		t.Fatalf("Go made %v allocations per job on a grown queue", n)
	}
}

// pending is the number of queued jobs not yet taken by a worker.
func (p *Pool[J]) pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}
