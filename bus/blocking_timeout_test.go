package bus_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/timerwheel"
	"github.com/jadevm/jade/vmloop"
)

// timeoutProg: timeouts makes n blocking calls in a row, each under a
// 5 ms time.timeout, and counts the TimeoutErrors it catches; hold does
// that and then sleeps 60 s, alive; quick makes one call with no timeout.
const timeoutProg = `
.abi 1.1
.func timeouts(n:i64) -> i64
  .local i:i64, c:i64, r:i64, d:i64, t:i64, e:ref, s:ref, k:ref
  const   i, 0
  const   c, 0
  const   d, 5000000
  const   k, "TimeoutError"
l:
  jge     i, n, done
  intr    _, time.timeout, d
  .try    b, z, h, e
b:
  intr    r, host.block, i
z:
  jmp     next
h:
  errkind s, e
  seq     t, s, k
  add     c, c, t
next:
  addi    i, i, 1
  jmp     l
done:
  ret     c
.end
.func hold(n:i64) -> i64
  .local c:i64, d:i64
  call    c, timeouts, n
  const   d, 60000000000
  intr    _, time.sleep, d
  ret     c
.end
.func quick(x:i64) -> i64
  .local r:i64
  intr r, host.quick, x
  ret r
.end`

// newTimeoutBus is a one-worker bus with a blocking pool of pool, a
// timer wheel, host.block (blocks until its context ends or release is
// closed) and host.quick (returns its argument + 1 at once); started
// counts the host.block calls that ran.
func newTimeoutBus(t *testing.T, pool int) (*bus.Member, *vmloop.Program, *bus.Bus, chan struct{}, *atomic.Int64) {
	t.Helper()
	b := testkit.Bus(t, bus.Config{Workers: 1, BlockingPool: pool}, nil)
	release := make(chan struct{})
	started := new(atomic.Int64)
	require.NoError(t, b.RegisterBlockingIntrinsic("host.block", []vmloop.Type{vmloop.TI64}, vmloop.TI64, 0,
		func(ctx context.Context, args []vmloop.Value) (vmloop.Value, error) {
			started.Add(1)
			select {
			case <-release:
				return vmloop.I64(args[0].Int() + 1), nil
			case <-ctx.Done():
				return vmloop.Void(), ctx.Err()
			}
		}))
	require.NoError(t, b.RegisterBlockingIntrinsic("host.quick", []vmloop.Type{vmloop.TI64}, vmloop.TI64, 0,
		func(_ context.Context, args []vmloop.Value) (vmloop.Value, error) {
			return vmloop.I64(args[0].Int() + 1), nil
		}))
	p := testkit.Prog(t, b, timeoutProg+"\n"+blockingProg[len(".abi 1.1\n")+1:])
	wheel := timerwheel.DefaultConfig()
	m, err := b.RegisterEngine("m", sched.EngineRuntimeConfig{TimerWheel: &wheel}, bus.CapAll)
	require.NoError(t, err)
	return m, p, b, release, started
}

// TestTimedOutBlockingCallsFreeThePool: with a pool of four, a task
// catches twelve TimeoutErrors of blocking calls in a row; each timeout
// cancels its own call, so the pool empties and another task's call
// starts and completes. (A call's cancel was kept under the task's id: an
// earlier call ending deleted a later call's entry, the later timeout
// cancelled nothing, and its call held a place until the task ended.)
func TestTimedOutBlockingCallsFreeThePool(t *testing.T) {
	m, p, b, release, _ := newTimeoutBus(t, 4)
	defer close(release)
	hog := mustSpawn(t, m, p, "hold", 12)
	issued := func() int64 { s := b.BlockingStats(); return s.Calls + s.Running + s.Queued }
	testkit.WaitFor(t, func() bool { return issued() == 12 }, func() string { return fmt.Sprintf("%+v", b.BlockingStats()) })
	q := mustSpawn(t, m, p, "quick", 41)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	qo, err := bus.Await(ctx, q)
	require.NoError(t, err, "another task's call did not complete while the task that timed out lives: %+v", b.BlockingStats())
	require.Equal(t, int64(42), qo.Value.Int())
	require.Eventually(t, func() bool { s := b.BlockingStats(); return s.Running == 0 && s.Queued == 0 }, 10*time.Second, time.Millisecond,
		"the pool holds calls: %+v", b.BlockingStats())
	require.Zero(t, m.Engine().BlockingCalls())
	require.NoError(t, m.Cancel(hog))
	require.Equal(t, sched.Cancelled, testkit.Await(t, hog).Kind)
}

// TestBlockingCallTimedOutWhileQueuedNeverRuns: with the pool's one place
// taken, a call under a 5 ms timeout waits for a place and times out; once
// the place frees, its host function never runs (its task was already
// told TimeoutError), and its engine's blockingCalls unit is given back
// without waiting for the place.
func TestBlockingCallTimedOutWhileQueuedNeverRuns(t *testing.T) {
	m, p, b, release, started := newTimeoutBus(t, 1)
	first := mustSpawn(t, m, p, "main", 1)
	testkit.WaitFor(t, func() bool { return started.Load() == 1 }, "the first call runs")
	o := testkit.Await(t, mustSpawn(t, m, p, "timeouts", 1))
	require.Equal(t, int64(1), o.Value.Int(), "the queued call times out")
	require.Eventually(t, func() bool { return b.BlockingStats().Queued == 0 && m.Engine().BlockingCalls() == 1 }, 10*time.Second, time.Millisecond,
		"the timed-out call still waits for a place")
	close(release)
	require.Equal(t, int64(2), testkit.Await(t, first).Value.Int())
	testkit.WaitFor(t, func() bool { return m.Engine().BlockingCalls() == 0 }, "blockingCalls given back")
	time.Sleep(10 * time.Millisecond)
	require.Equal(t, int64(1), started.Load(), "the timed-out call's function ran")
}
