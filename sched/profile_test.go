package sched_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// countSampler counts samples and checks their innermost function.
type countSampler struct {
	n    atomic.Int64
	mu   sync.Mutex
	fns  map[string]int
	tids map[uint64]bool
}

func (c *countSampler) Sample(t *sched.Task, stack []vmloop.ProfFrame) {
	c.n.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fns[t.Program().FuncName(int(stack[0].Fn))]++
	c.tids[t.ID()] = true
}

const spinSrc = `
.func spin() -> i64
  .local i:i64
  const i, 0
l:
  addi i, i, 1
  jmp  l
.end`

// hammer calls RequestSamples every 50 µs until stop is closed.
func hammer(s *sched.Scheduler, stop chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Microsecond):
				s.RequestSamples()
			}
		}
	}()
	return &wg
}

// TestSamplesKeepSlices: samples taken at safe points do not end the
// slices of CPU-bound tasks, a cancel still ends them, and the samples
// are of the running function and tasks (TestSamplePreempted has the
// cases one by one).
func TestSamplesKeepSlices(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 2, ReductionLimit: sched.MaxReductionLimit})
	s := hostbus.Scheduler(rt)
	p := testkit.Load(t, rt, spinSrc)
	c := &countSampler{fns: map[string]int{}, tids: map[uint64]bool{}}
	require.NoError(t, s.StartSampling(c))
	defer s.StopSampling()
	require.Error(t, s.StartSampling(c), "a second sampler")
	var tasks []*jade.Task
	for i := 0; i < 2; i++ {
		tk, err := rt.Spawn(p, "spin")
		require.NoError(t, err)
		tasks = append(tasks, tk)
	}
	stop := make(chan struct{})
	wg := hammer(s, stop)
	defer func() { close(stop); wg.Wait() }()
	for deadline := time.Now().Add(20 * time.Second); c.n.Load() < 200; {
		require.True(t, time.Now().Before(deadline), "only %d samples", c.n.Load())
		time.Sleep(time.Millisecond)
	}
	// A whole slice of 10M reductions lasts milliseconds: far fewer
	// dispatches than samples, so the samples did not end slices.
	d0 := s.Dispatches()
	n0 := c.n.Load()
	time.Sleep(50 * time.Millisecond)
	require.Less(t, s.Dispatches()-d0, uint64(c.n.Load()-n0)/2+10, "samples ended slices")
	for _, tk := range tasks {
		require.NoError(t, tk.Cancel())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, tk := range tasks {
		o, err := tk.Wait(ctx)
		require.NoError(t, err)
		require.Equal(t, sched.Cancelled, o.Kind)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	require.Equal(t, map[string]int{"spin": c.fns["spin"]}, c.fns)
	for _, tk := range tasks {
		require.True(t, c.tids[tk.ID()], "task %d never sampled", tk.ID())
	}
}

// TestSampleIdleWorkers: a parked worker is not asked; without a
// sampler nobody is.
func TestSampleIdleWorkers(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 2})
	s := hostbus.Scheduler(rt)
	require.Equal(t, 0, s.RequestSamples(), "asked without a sampler")
	c := &countSampler{fns: map[string]int{}, tids: map[uint64]bool{}}
	require.NoError(t, s.StartSampling(c))
	for deadline := time.Now().Add(10 * time.Second); s.IdleWorkers() != 2; {
		require.True(t, time.Now().Before(deadline), "workers never parked")
		time.Sleep(time.Millisecond)
	}
	require.Equal(t, 0, s.RequestSamples(), "parked workers asked")
	s.StopSampling()
	require.Equal(t, 0, s.RequestSamples())
	require.NoError(t, s.StartSampling(c), "a sampler again after StopSampling")
	s.StopSampling()
	require.Zero(t, c.n.Load())
}
