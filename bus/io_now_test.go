//go:build linux

package bus_test

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

const ioNowProg = `
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
; write_k listens on addr, waits for gate, accepts one connection and
; writes "0123456789abcdef" to it k times.
.func write_k(addr:ref, k:i64, gate:ref) -> i64
  .local l:ref, c:ref, s:ref, b:ref, i:i64, z:i64, n:i64
  intr l, net.listen, addr
  evwait gate
  intr c, net.accept, l
  const s, "0123456789abcdef"
  stob b, s
  blen n, b
  const z, 0
  const i, 0
more:
  intr _, net.write, c, b, z, n
  addi i, i, 1
  jlt i, k, more
  ret i
.end
; write_big listens on addr, waits for gate, accepts one connection and
; writes size zero bytes to it in one net.write.
.func write_big(addr:ref, size:i64, gate:ref) -> i64
  .local l:ref, c:ref, b:ref, z:i64, n:i64
  intr l, net.listen, addr
  evwait gate
  intr c, net.accept, l
  bnew b, size
  const z, 0
  intr n, net.write, c, b, z, size
  ret n
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
		b, m, p := ioNowBus(t)
		const n = 50
		addr := testkit.FreeAddr(t)
		gate := m.NewEvent()
		s := b.Scheduler()
		task, err := m.Spawn(nil, p, "accept_backlog", vmloop.Str(addr), vmloop.I64(n), gate)
		require.NoError(t, err)
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

// TestWriteTheSocketTakesDoesNotSuspend: a net.write that the socket
// takes at once completes in the task's slice, without waiting for a
// completion: k writes and the task's end are one dispatch.
func TestWriteTheSocketTakesDoesNotSuspend(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		b, m, p := ioNowBus(t)
		const k = 20
		addr := testkit.FreeAddr(t)
		gate := m.NewEvent()
		s := b.Scheduler()
		task, err := m.Spawn(nil, p, "write_k", vmloop.Str(addr), vmloop.I64(k), gate)
		require.NoError(t, err)
		testkit.WaitFor(t, func() bool { return s.WaitingTasks() == 1 }, "listening, waiting on the gate")
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		require.NoError(t, err)
		defer c.Close()
		before := s.Dispatches()
		require.NoError(t, m.Signal(gate))
		o := testkit.Await(t, task)
		require.Equal(t, sched.Success, o.Kind, "%v", o)
		require.Equal(t, int64(k), o.Value.Int())
		require.LessOrEqual(t, s.Dispatches()-before, uint64(2), "slices of %d writes", k)
		c.SetDeadline(time.Now().Add(10 * time.Second))
		got, err := io.ReadAll(c) // closed at the task's end
		require.NoError(t, err)
		require.Equal(t, strings.Repeat("0123456789abcdef", k), string(got))
	})
}

// TestWriteTheSocketTakesInPart: a write larger than the socket takes
// at once sends the rest through the backend, and every byte arrives.
func TestWriteTheSocketTakesInPart(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		b, m, p := ioNowBus(t)
		const size = 16 << 20 // more than a loopback socket buffers
		addr := testkit.FreeAddr(t)
		gate := m.NewEvent()
		task, err := m.Spawn(nil, p, "write_big", vmloop.Str(addr), vmloop.I64(size), gate)
		require.NoError(t, err)
		testkit.WaitFor(t, func() bool { return b.Scheduler().WaitingTasks() == 1 }, "listening, waiting on the gate")
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, m.Signal(gate))
		c.SetDeadline(time.Now().Add(10 * time.Second))
		n, err := io.Copy(io.Discard, c)
		require.NoError(t, err)
		require.Equal(t, int64(size), n)
		o := testkit.Await(t, task)
		require.Equal(t, sched.Success, o.Kind, "%v", o)
		require.Equal(t, int64(size), o.Value.Int())
	})
}

// ioNowBus starts a bus of one worker and one engine that may use the
// network, with ioNowProg loaded.
func ioNowBus(t *testing.T) (*bus.Bus, *bus.Member, *vmloop.Program) {
	t.Helper()
	var m *bus.Member
	b := testkit.Bus(t, bus.Config{Workers: 1}, func(b *bus.Bus) {
		m = testkit.Engine(t, b, "io", sched.EngineRuntimeConfig{TimerWheel: testkit.Wheel()}, bus.CapAll)
	})
	return b, m, testkit.Prog(t, b, ioNowProg)
}
