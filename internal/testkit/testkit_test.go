package testkit_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// TestRuntimeRunsTheCanonicalPrograms: fib and fanout load and run on a
// runtime of the kit, per worker count; the cleanup's Close and leak
// check pass.
func TestRuntimeRunsTheCanonicalPrograms(t *testing.T) {
	testkit.Workers(t, []int{1, 2}, func(t *testing.T, workers int) {
		rt := testkit.Runtime(t, jade.Options{Workers: workers})
		fib := testkit.Load(t, rt, testkit.Fib)
		o := testkit.Run(t, rt, fib, "fib", vmloop.I64(20))
		require.Equal(t, sched.Success, o.Kind, "%v", o)
		require.Equal(t, int64(6765), o.Value.Int())
		fan := testkit.Load(t, rt, testkit.Fanout)
		o = testkit.RunFanout(t, rt, fan, 1000)
		require.Equal(t, sched.Success, o.Kind, "%v", o)
		require.Equal(t, int64(1000*999/2), o.Value.Int())
		testkit.WaitFor(t, func() bool { return hostbus.Scheduler(rt).LiveTasks() == 0 }, "live tasks")
	})
}

// TestForcedRuntimeCancelsWaiters: a task left waiting at the end is
// cancelled by ForcedRuntime's cleanup, which then finds no leak.
func TestForcedRuntimeCancelsWaiters(t *testing.T) {
	rt := testkit.ForcedRuntime(t, jade.Options{Workers: 1})
	p := testkit.Load(t, rt, `
.func wait(ev:ref) -> void
  evwait ev
  retv
.end`)
	_, err := rt.Spawn(p, "wait", rt.NewEvent())
	require.NoError(t, err)
	testkit.WaitFor(t, func() bool { return hostbus.Scheduler(rt).WaitingTasks() == 1 })
}

// TestBusSpawnAwait: a bus of the kit with an engine registered in its
// setup runs a task to its outcome.
func TestBusSpawnAwait(t *testing.T) {
	var m *bus.Member
	b := testkit.Bus(t, bus.Config{Workers: 1}, func(b *bus.Bus) {
		m = testkit.Engine(t, b, "e", sched.EngineRuntimeConfig{TimerWheel: testkit.Wheel()}, bus.CapAll)
	})
	p := testkit.Prog(t, b, testkit.Fib)
	o := testkit.SpawnAwait(t, m, p, "fib", vmloop.I64(10))
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.Equal(t, int64(55), o.Value.Int())
}

// TestWaitForMessage: WaitFor's failure message is the format and its
// arguments, or what a func() string says when it is called.
func TestWaitForMessage(t *testing.T) {
	n := 3
	for _, c := range []struct {
		args []any
		want string
	}{
		{nil, "condition"},
		{[]any{"%d pending", n}, "3 pending"},
		{[]any{func() string { return fmt.Sprint(n, " live") }}, "3 live"},
	} {
		require.Equal(t, c.want, testkit.Message(c.args))
	}
}

// TestFreeAddr: the address is a loopback one with a port.
func TestFreeAddr(t *testing.T) {
	require.Regexp(t, `^127\.0\.0\.1:[1-9][0-9]*$`, testkit.FreeAddr(t))
}

// recorder is a testing.TB that keeps its cleanups and failures for the
// test that drives it.
type recorder struct {
	testing.TB
	cleanups []func()
	failures []string
}

func (r *recorder) Helper()           {}
func (r *recorder) Cleanup(f func())  { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Error(args ...any) { r.failures = append(r.failures, fmt.Sprint(args...)) }
func (r *recorder) Errorf(format string, a ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, a...))
}
func (r *recorder) cleanup() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// TestRuntimeReportsALeak: a goroutine started after Runtime and still
// running at the cleanup fails the test that made the runtime.
func TestRuntimeReportsALeak(t *testing.T) {
	patience := *testkit.LeakPatience
	*testkit.LeakPatience = 0 // one goleak.Find: fail at its first report
	t.Cleanup(func() { *testkit.LeakPatience = patience })
	r := &recorder{TB: t}
	testkit.Runtime(r, jade.Options{Workers: 1})
	release := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); <-release }()
	r.cleanup()
	close(release)
	<-done
	require.Len(t, r.failures, 1, "failures: %q", r.failures)
	require.Contains(t, r.failures[0], "found unexpected goroutines")
}
