package workpool

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestRunsEveryJobBeforeStop: workers start at the first job, and Stop
// returns only after every queued job has run.
func TestRunsEveryJobBeforeStop(t *testing.T) {
	var sum atomic.Int64
	p := New(0, 100, func(j int) { sum.Add(int64(j)) })
	if p.Size() != DefaultSize || p.started != 0 {
		t.Fatalf("size %d, started %d before the first job", p.Size(), p.started)
	}
	var mu sync.Mutex
	for i := 1; i <= 100; i++ {
		mu.Lock()
		p.Go(i)
		mu.Unlock()
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
