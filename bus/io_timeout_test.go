//go:build linux

package bus_test

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

const ioTimeoutProg = `
.abi 1.3
; stale_timeout accepts one connection, sets a 1 ms time.timeout before a
; wait that completes at once (mode 0: the accept itself, of a connection
; already waiting; 1: a write the socket takes; 2: a write of no bytes;
; 3: a join of a task that has ended; 4: an evwait on a signalled event),
; then reads the connection with no timeout of its own. The peer writes
; only later: a timeout left behind by the fast path would throw
; TimeoutError. It returns the bytes read.
.func stale_timeout(addr:ref, mode:i64, gate:ref) -> i64
  .local l:ref, c:ref, b:ref, s:ref, ch:ref, ev:ref, z:i64, n:i64, d:i64, ms:i64
  const d, 1000000
  const z, 0
  const s, "ping"
  stob b, s
  blen n, b
  intr l, net.listen, addr
  evwait gate
  jnei mode, 0, take
  intr _, time.timeout, d
take:
  intr c, net.accept, l
  jnei mode, 1, m2
  intr _, time.timeout, d
  intr _, net.write, c, b, z, n
m2:
  jnei mode, 2, m3
  intr _, time.timeout, d
  intr _, net.write, c, b, z, z
m3:
  jnei mode, 3, m4
  spawn ch, ended
  const ms, 10000000
  intr _, time.sleep, ms
  intr _, time.timeout, d
  joinv ch
m4:
  jnei mode, 4, rd
  evnew ev
  evsignal ev
  intr _, time.timeout, d
  evwait ev
rd:
  intr n, net.read, c, b, z
  ret n
.end
.func ended() -> void
  retv
.end
; write_timed connects to addr and writes size bytes in one net.write
; under timeout d; it returns what the write reported.
.func write_timed(addr:ref, size:i64, d:i64) -> i64
  .local c:ref, b:ref, z:i64, n:i64
  intr c, net.connect, addr
  bnew b, size
  const z, 0
  intr _, time.timeout, d
  intr n, net.write, c, b, z, size
  ret n
.end
`

// TestFastPathDropsTheTimeout: a wait that completes without suspending
// (an accept of a waiting connection, a write the socket takes, a write of
// no bytes, a join of an ended task, an evwait on a signalled event) drops
// its time.timeout, so a later read with no timeout waits for its data.
// The inline accept and write used to leave the timeout armed for the
// next wait, which threw TimeoutError after 1 ms.
func TestFastPathDropsTheTimeout(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		b, m, _ := ioNowBus(t)
		p := testkit.Prog(t, b, ioTimeoutProg)
		s := b.Scheduler()
		for mode, what := range []string{"accept", "write", "empty write", "join", "evwait"} {
			addr := testkit.FreeAddr(t)
			gate := m.NewEvent()
			task, err := m.Spawn(nil, p, "stale_timeout", vmloop.Str(addr), vmloop.I64(int64(mode)), gate)
			require.NoError(t, err)
			testkit.WaitFor(t, func() bool { return s.WaitingTasks() == 1 }, "listening, waiting on the gate")
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			require.NoError(t, err) // in the listener's backlog now
			require.NoError(t, m.Signal(gate))
			time.Sleep(100 * time.Millisecond) // well past the 1 ms timeout
			_, err = c.Write([]byte("pong"))
			require.NoError(t, err)
			o := testkit.Await(t, task)
			c.Close()
			require.Equal(t, sched.Success, o.Kind, "read after a timed %s: %v", what, o)
			require.EqualValues(t, 4, o.Value.Int(), "read after a timed %s", what)
		}
	})
}

// TestWriteTimeoutCoversTheWholeWrite: a 16 MiB write under a 200 ms
// timeout to a peer that does not read ends at its deadline, reporting
// the bytes it sent, which are the bytes the peer then receives. The
// rest of a short write used to be resubmitted with no timeout: the write
// hung until the peer read or closed.
func TestWriteTimeoutCoversTheWholeWrite(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		b, m, _ := ioNowBus(t)
		p := testkit.Prog(t, b, ioTimeoutProg)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer ln.Close()
		const size = 16 << 20
		done := make(chan struct{})
		got := make(chan int64, 1)
		go func() {
			c, err := ln.Accept()
			if err != nil {
				got <- -1
				return
			}
			defer c.Close()
			select { // reads nothing until the write has ended
			case <-done:
			case <-time.After(20 * time.Second):
			}
			c.SetDeadline(time.Now().Add(20 * time.Second))
			n, _ := io.Copy(io.Discard, c)
			got <- n
		}()
		start := time.Now()
		task, err := m.Spawn(nil, p, "write_timed", vmloop.Str(ln.Addr().String()), vmloop.I64(size), ms(200))
		require.NoError(t, err)
		o := testkit.Await(t, task)
		took := time.Since(start)
		close(done)
		require.Equal(t, sched.Success, o.Kind, "write_timed: %v", o)
		require.Less(t, took, 5*time.Second, "a 200 ms write timeout")
		n := o.Value.Int()
		t.Logf("a %d-byte write under a 200 ms timeout returned %d after %v", size, n, took)
		require.Greater(t, n, int64(0), "bytes the timed-out write sent")
		require.Less(t, n, int64(size), "bytes the timed-out write sent")
		require.Equal(t, n, <-got, "bytes the peer received")
	})
}

// TestTimedOutWriteReportsWhatItSent: 64 KiB writes under a 1 ms
// timeout to a slow reader, each chunk's rest retried after a write
// that timed out: the bytes the writes report are the bytes the peer
// receives. A write that had sent part of its chunk (inline, or in a
// short write) used to throw TimeoutError, and the loop sent that part
// again.
func TestTimedOutWriteReportsWhatItSent(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		b, m, _ := ioBus(t, bus.CapAll, sched.ResourceLimits{})
		p := testkit.Prog(t, b, safetyProg)
		const total = 8_000_000
		sent, got := sendAll(t, m, p, 64<<10, 1_000_000, total)
		t.Logf("64 KiB writes under 1 ms timeouts: %d bytes reported, %d received", sent, got)
		require.EqualValues(t, total, sent, "bytes the writes reported")
		require.EqualValues(t, total, got, "bytes the peer received")
	})
}

// sendAll runs safetyProg's send_all (chunks of chunk bytes, each write
// under timeout d ns) against a slow reader, and returns the bytes the
// writes reported and the bytes the reader received.
func sendAll(t *testing.T, m *bus.Member, p *vmloop.Program, chunk, d, total int64) (sent, got int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	recv := make(chan int64, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			recv <- -1
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(60 * time.Second))
		var n int64
		buf := make([]byte, 4096)
		for {
			k, err := c.Read(buf)
			n += int64(k)
			if err != nil {
				break
			}
			if n%50_000 < 4096 {
				time.Sleep(time.Millisecond) // let the socket buffer fill
			}
		}
		recv <- n
	}()
	o := testkit.SpawnAwait(t, m, p, "send_all", vmloop.Str(ln.Addr().String()), vmloop.I64(d), vmloop.I64(total), vmloop.I64(chunk))
	require.Equal(t, sched.Success, o.Kind, "send_all: %v", o)
	return o.Value.Int(), <-recv
}
