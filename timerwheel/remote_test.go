package timerwheel

import (
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
)

// TestCancelRemoteRace races remote cancels (several per handle, from
// several goroutines) against the owner inserting, resetting, cancelling
// and firing, then checks that every timer either fired exactly once or was
// cancelled exactly once, never both. Run it with -race.
func TestCancelRemoteRace(t *testing.T) {
	const (
		cancellers = 4
		rounds     = 300
		perRound   = 64
	)
	w := newWheel(t, TimerWheelConfig{Levels: 3, SlotsPerLevel: 8, Tick: 10}, 0)
	total := rounds * perRound
	cancelled := make([]atomic.Int32, total) // successful cancels per timer
	fired := make([]int32, total)            // owner only
	work := make(chan Handle, 1024)
	var wg sync.WaitGroup
	for range cancellers {
		wg.Go(func() {
			for h := range work {
				if w.CancelRemote(h) {
					cancelled[w.payloadOfHandleForTest(h)].Add(1)
				}
			}
		})
	}
	r := rand.New(rand.NewPCG(1, 2))
	now := int64(0)
	var dst []Expired
	record := func(es []Expired) {
		for _, e := range es {
			fired[e.Payload]++
		}
	}
	ownerCancelled := make([]bool, total)
	taken := make([]int, total) // payloads reported by TakeCancelled
	var tc []uint64
	take := func() {
		tc = w.TakeCancelled(tc[:0])
		for _, p := range tc {
			taken[p]++
		}
	}
	for round := range rounds {
		for i := range perRound {
			id := round*perRound + i
			h := w.Insert(now+int64(r.IntN(2000)), uint64(id))
			testPayloads.Store(h, id)
			switch r.IntN(4) {
			case 0: // two remote cancellers race on this one
				work <- h
				work <- h
			case 1:
				work <- h
			case 2:
				if r.IntN(4) == 0 && w.Cancel(h) {
					ownerCancelled[id] = true
				} else {
					w.Reset(h, now+int64(r.IntN(500)))
				}
			}
		}
		now += int64(r.IntN(300))
		dst = w.Advance(now, dst[:0])
		record(dst)
		w.NextDeadline()
		take()
	}
	close(work)
	wg.Wait()
	dst = w.Advance(math.MaxInt64, dst[:0])
	record(dst)
	take()
	for id := range total {
		if want := int(cancelled[id].Load()); taken[id] != want {
			t.Fatalf("timer %d: TakeCancelled reported it %d times, remote cancels %d", id, taken[id], want)
		}
	}
	for id := range total {
		c := int(cancelled[id].Load())
		if ownerCancelled[id] {
			c++
		}
		if c+int(fired[id]) != 1 {
			t.Fatalf("timer %d: fired %d times, cancelled %d times", id, fired[id], c)
		}
	}
	if n := w.Len(); n != 0 {
		t.Fatalf("Len = %d after draining everything", n)
	}
	s := w.Stats()
	t.Logf("stats %+v", s)
	if s.Fires+s.Cancels != uint64(total) {
		t.Fatalf("fires %d + cancels %d != %d", s.Fires, s.Cancels, total)
	}
}

// testPayloads maps handles to timer ids for the cancellers (the wheel's
// payload is owner-only).
var testPayloads sync.Map

func (w *Wheel) payloadOfHandleForTest(h Handle) int {
	v, _ := testPayloads.Load(h)
	return v.(int)
}

// A remote cancel that lands between NextDeadline and Advance makes the
// owner wake early at worst; the cancelled timer never fires.
func TestCancelRemoteBetweenParkAndAdvance(t *testing.T) {
	w := newWheel(t, DefaultConfig(), 0)
	h := w.Insert(5*ms, 1)
	w.Insert(9*ms, 2)
	d, _ := w.NextDeadline()
	done := make(chan bool)
	go func() { done <- w.CancelRemote(h) }()
	if !<-done {
		t.Fatal("remote cancel failed")
	}
	if got := w.Advance(d, nil); len(got) != 0 {
		t.Fatalf("cancelled timer fired: %v", got)
	}
	if d, _ := w.NextDeadline(); d != 9*ms {
		t.Fatalf("NextDeadline = %d after drain", d)
	}
}

// Remote cancels race the slab growing (new pages published while the
// canceller resolves handles).
func TestCancelRemoteWhileGrowing(t *testing.T) {
	w := newWheel(t, DefaultConfig(), 0)
	hs := make(chan Handle, 4096)
	var ok atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for h := range hs {
			if w.CancelRemote(h) {
				ok.Add(1)
			}
		}
	})
	const n = 20 * pageSize
	for i := range n {
		h := w.Insert(int64(i)*ms, uint64(i))
		if i%2 == 0 {
			hs <- h
		}
	}
	close(hs)
	wg.Wait()
	if ok.Load() != n/2 {
		t.Fatalf("%d remote cancels succeeded, want %d", ok.Load(), n/2)
	}
	if got := w.Len(); got != n/2 {
		t.Fatalf("Len = %d, want %d", got, n/2)
	}
	fired := w.Advance(math.MaxInt64, nil)
	for _, e := range fired {
		if e.Payload%2 == 0 {
			t.Fatalf("cancelled timer %d fired", e.Payload)
		}
	}
	if len(fired) != n/2 {
		t.Fatalf("fired %d, want %d", len(fired), n/2)
	}
}
