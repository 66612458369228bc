package bus_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

const refusedCallProg = `
.abi 1.1
.func main(x:i64) -> i64
  .local r:i64
  intr r, host.block, x
  ret r
.end
; refused_then_wait sets a 1 ms time.timeout before a blocking call that
; the engine's limit refuses at once (a caught ResourceError), then waits
; on ev with no timeout of its own.
.func refused_then_wait(x:i64, ev:ref) -> ref
  .local r:i64, d:i64, e:ref, s:ref
  const   d, 1000000
  intr    _, time.timeout, d
  .try    b, z, h, e
b:
  intr    r, host.block, x
z:
h:
  evwait  ev
  const   s, "waited"
  ret     s
.end`

// TestRefusedBlockingCallDropsTheTimeout: a blocking host call that fails
// at once (the engine's blockingCalls limit) drops its time.timeout like
// any wait that ends without suspending, so a later evwait with no
// timeout waits for its signal. The call took the timeout only once it
// had its place, and the refused call left it for the next wait.
func TestRefusedBlockingCallDropsTheTimeout(t *testing.T) {
	b, release, started, _ := newBlockingBus(t, 8)
	p := testkit.Prog(t, b, refusedCallProg)
	m, err := b.RegisterEngine("m", sched.EngineRuntimeConfig{TimerWheel: testkit.Wheel(), Limits: sched.ResourceLimits{BlockingCalls: 1}}, bus.CapAll)
	require.NoError(t, err)
	holder := mustSpawn(t, m, p, "main", 1)
	require.Eventually(t, func() bool { return started.Load() == 1 }, 5*time.Second, time.Millisecond)
	ev := m.NewEvent()
	task, err := m.Spawn(nil, p, "refused_then_wait", vmloop.I64(2), ev)
	require.NoError(t, err)
	time.Sleep(100 * time.Millisecond) // well past the 1 ms timeout
	require.NoError(t, m.Signal(ev))
	o := testkit.Await(t, task)
	require.Equal(t, sched.Success, o.Kind, "evwait after a refused timed call: %v", o)
	require.Equal(t, "waited", o.Value.String())
	close(release)
	require.Equal(t, int64(2), testkit.Await(t, holder).Value.Int())
}
