//go:build linux

package bus_test

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

const acceptBacklogProg = `
.abi 1.3
; accept_backlog listens on addr, waits for gate, then accepts n
; connections (closed when it ends, their owner).
.func accept_backlog(addr:ref, n:i64, gate:ref) -> i64
  .local l:ref, c:ref, i:i64
  intr l, net.listen, addr
  evwait gate
  const i, 0
more:
  intr c, net.accept, l
  free c
  addi i, i, 1
  jlt i, n, more
  ret i
.end
`

// TestAcceptTakesTheBacklogInOneSlice: connections already waiting on a
// listener are accepted without suspending, so an accept loop takes a
// backlog of n within one slice. Were each accept to wait for its
// completion, the loop would be dispatched once per connection (and,
// behind runnable connection tasks, would make a burst's last connection
// wait for all the others' requests).
func TestAcceptTakesTheBacklogInOneSlice(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		var m *bus.Member
		b := testkit.Bus(t, bus.Config{Workers: 1}, func(b *bus.Bus) {
			m = testkit.Engine(t, b, "io", sched.EngineRuntimeConfig{TimerWheel: testkit.Wheel(),
				Metrics: sched.MetricsConfig{TaskStats: true}}, bus.CapAll)
		})
		p := testkit.Prog(t, b, acceptBacklogProg)
		const n = 50
		addr := testkit.FreeAddr(t)
		gate := m.NewEvent()
		task, err := m.Spawn(nil, p, "accept_backlog", vmloop.Str(addr), vmloop.I64(n), gate)
		require.NoError(t, err)
		s := b.Scheduler()
		testkit.WaitFor(t, func() bool { return s.WaitingTasks() == 1 }, "listening, waiting on the gate")
		for range n {
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			require.NoError(t, err) // in the listener's backlog now
			defer c.Close()
		}
		before := s.Dispatches()
		require.NoError(t, m.Signal(gate))
		o := testkit.Await(t, task)
		require.Equal(t, sched.Success, o.Kind, "%v", o)
		require.Equal(t, int64(n), o.Value.Int())
		// One slice took the n connections and returned.
		require.LessOrEqual(t, s.Dispatches()-before, uint64(2), "slices of the accept loop for %d waiting connections", n)
	})
}
