package bus_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// A wake that has won carries a result; a cancel observed after it must
// release that result or hand it on (sched/wait.go). These tests cancel a
// task in the window between a completer's winning wake and the task's
// next dispatch.

const abandonProg = `
.abi 1.2
.func wait_ev(ev:ref) -> i64
  .local z:i64
  evwait ev
  intr z, test.get             ; the host sees that the signal was received
  ret z
.end
.func get() -> i64
  .local v:i64
  intr v, test.get
  ret v
.end
.func hog() -> void
l:
  jmp l
.end
`

// oneWorkerBus is a bus with one worker and an engine whose slices are
// long (a hog keeps the worker for a while), with a timer wheel.
func oneWorkerBus(t *testing.T, host bus.HostFunc) (*bus.Bus, *bus.Member, *vmloop.Program) {
	t.Helper()
	if host == nil {
		host = func(*bus.Call) (vmloop.Value, error) { return vmloop.I64(0), nil }
	}
	var m *bus.Member
	b := testkit.Bus(t, bus.Config{Workers: 1}, func(b *bus.Bus) {
		require.NoError(t, b.RegisterIntrinsic("test.get", nil, vmloop.TI64, 0, host))
		m = testkit.Engine(t, b, "a", sched.EngineRuntimeConfig{TimerWheel: testkit.Wheel(), ReductionLimit: 2_000_000}, bus.CapAll)
	})
	return b, m, testkit.Prog(t, b, abandonProg)
}

func waitState(t *testing.T, task *sched.Task, st sched.State) {
	t.Helper()
	require.Eventually(t, func() bool { return task.State() == st }, 5*time.Second, 50*time.Microsecond, "task %d never %v", task.ID(), st)
}

// TestCancelledWaiterPassesTheSignalOn: one signal, two waiters; the first
// is cancelled after the signal won its wake. The signal must go on to the
// second waiter (it used to be swallowed: the second waited for ever).
func TestCancelledWaiterPassesTheSignalOn(t *testing.T) {
	var gotBy sync.Map // task ids that returned from evwait
	_, m, p := oneWorkerBus(t, func(c *bus.Call) (vmloop.Value, error) {
		gotBy.Store(c.TaskID(), true)
		return vmloop.I64(1), nil
	})
	swallowed, landed := 0, 0
	for range 50 {
		ev := m.NewEvent()
		w1, err := m.Spawn(nil, p, "wait_ev", ev)
		require.NoError(t, err)
		waitState(t, w1, sched.Waiting)
		w2, err := m.Spawn(nil, p, "wait_ev", ev)
		require.NoError(t, err)
		waitState(t, w2, sched.Waiting)
		hog, err := m.Spawn(nil, p, "hog") // holds the worker: w1 stays Runnable a while
		require.NoError(t, err)
		waitState(t, hog, sched.Running)
		require.NoError(t, m.Signal(ev))
		require.NoError(t, m.Cancel(w1))
		o1 := testkit.Await(t, w1)
		m.Cancel(hog)
		testkit.Await(t, hog)
		_, received := gotBy.Load(w1.ID())
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		o2, err := bus.Await(ctx, w2)
		cancel()
		switch {
		case received:
			// w1 received the signal before it saw the cancel: w2 waits
			// for the next one.
			require.Error(t, err, "w2 woken by a signal w1 received (w1 %v)", o1)
			require.NoError(t, m.Signal(ev))
			o2 = testkit.Await(t, w2)
		case err != nil:
			landed++
			swallowed++
			m.Cancel(w2)
			testkit.Await(t, w2)
			continue
		default:
			require.Equal(t, sched.Cancelled, o1.Kind)
			landed++
		}
		require.Equal(t, sched.Success, o2.Kind)
	}
	require.NotZero(t, landed, "no cancel landed after the signal won")
	require.Zero(t, swallowed, "signals swallowed by a cancelled waiter, of 50")
}

// TestCancelledHostCallReleasesItsValue: a host completion that won the
// wake of a task cancelled before it resumed runs its release hook: every
// value handed over is either received by the task or released.
func TestCancelledHostCallReleasesItsValue(t *testing.T) {
	comps := make(chan *bus.Completion, 1)
	_, m, p := oneWorkerBus(t, func(c *bus.Call) (vmloop.Value, error) {
		comps <- c.Suspend()
		return vmloop.Void(), nil
	})
	var released atomic.Int64
	var won, received, cancelled int64
	for i := range 100 {
		task, err := m.Spawn(nil, p, "get")
		require.NoError(t, err)
		comp := <-comps
		waitState(t, task, sched.Waiting)
		// A hog holds the worker, so the woken task stays Runnable until
		// the hog's slice ends (or the kick for the outside wake).
		hog, err := m.Spawn(nil, p, "hog")
		require.NoError(t, err)
		waitState(t, hog, sched.Running)
		if comp.CompleteRelease(vmloop.I64(int64(i)), func(v vmloop.Value) { released.Add(1) }) {
			won++
		}
		require.NoError(t, m.Cancel(task))
		switch o := testkit.Await(t, task); o.Kind {
		case sched.Success:
			received++
		case sched.Cancelled:
			cancelled++
		default:
			t.Fatalf("get: %v", o)
		}
		m.Cancel(hog)
		testkit.Await(t, hog)
	}
	require.EqualValues(t, 100, won)
	require.NotZero(t, cancelled, "no cancel landed in the window")
	require.Equal(t, won, received+released.Load(), "values neither received nor released (cancelled %d)", cancelled)
}
