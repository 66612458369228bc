package bus_test

import (
	"context"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// chanFDProg moves accepted connections through channels.
const chanFDProg = `
.abi 1.5
; moved accepts one connection on l, sends it on ch and waits for reader
; (which received it) to end; then it writes on its own, stale copy and
; returns the reader's id and that write's error message.
.func moved(l:ref, ch:ref) -> ref
  .local c:ref, r:ref, id:i64, e:ref, out:ref, m:ref, buf:ref, n:i64, zero:i64
  spawn r, reader, ch
  intr  c, net.accept, l
  intr  _, chan.send_ref, ch, c
  joini id, r
  itos  out, id
  const m, "|"
  sconcat out, out, m
  const zero, 0
  const n, 4
  bnew  buf, n
  .try  b0, x0, h0, e
b0:
  intr  n, net.write, c, buf, zero, n
x0:
  const m, "the stale copy wrote"
  sconcat out, out, m
  ret   out
h0:
  errmsg m, e
  sconcat out, out, m
  ret   out
.end

; reader receives a connection, echoes one read and returns its own id
; (its end closes the connection).
.func reader(ch:ref) -> i64
  .local c:ref, buf:ref, n:i64, zero:i64, id:i64
  intr  c, chan.recv_ref, ch
  const zero, 0
  const n, 16
  bnew  buf, n
  intr  n, net.read, c, buf, zero
  intr  n, net.write, c, buf, zero, n
  intr  id, task.id
  ret   id
.end

; park accepts one connection and sends it on ch (buffered) and ends: the
; connection stays in the message.
.func park(l:ref, ch:ref) -> i64
  .local c:ref, n:i64
  intr  c, net.accept, l
  intr  _, chan.send_ref, ch, c
  const n, 0
  ret   n
.end

; unpark receives a connection from ch and writes "late" on it.
.func unpark(ch:ref) -> i64
  .local c:ref, buf:ref, n:i64, zero:i64
  intr  c, chan.recv_ref, ch
  const buf, "late"
  stob  buf, buf
  const zero, 0
  const n, 4
  intr  n, net.write, c, buf, zero, n
  ret   n
.end

; unsent accepts one connection; a try_send with no receiver and a send
; that times out do not send it, and it stays this task's: the write
; after them works. Then a child gets it at spawn, and a send of the
; stale copy is refused. Returns the write's count and the refusal.
.func unsent(l:ref) -> ref
  .local c:ref, ch:ref, n:i64, zero:i64, d:i64, e:ref, k:ref, out:ref, m:ref, buf:ref, t:ref
  const zero, 0
  intr  ch, chan.new_ref, zero
  intr  c, net.accept, l
  intr  n, chan.try_send_ref, ch, c
  jnz   n, bad
  const d, 1000000
  intr  _, time.timeout, d
  .try  b0, x0, h0, e
b0:
  intr  _, chan.send_ref, ch, c
x0:
bad:
  const out, "sent"
  ret   out
h0:
  errkind k, e
  const buf, "mine"
  stob  buf, buf
  const n, 4
  intr  n, net.write, c, buf, zero, n
  itos  out, n
  spawn t, hold, c
  .try  b1, x1, h1, e
b1:
  intr  _, chan.send_ref, ch, c
x1:
  ret   out
h1:
  errmsg m, e
  const buf, "|"
  sconcat out, out, buf
  sconcat out, out, m
  joini n, t
  ret   out
.end

; viasel accepts one connection and offers it in a select's send case;
; replacing the case's value gives it back (the write works), and a wait
; then sends it on ch to selreader, which takes it through a select of
; its own and writes on it. Returns the first write's count and the error
; of a write on the stale copy.
.func viasel(l:ref, ch:ref) -> ref
  .local c:ref, s:ref, v:ref, buf:ref, out:ref, m:ref, e:ref, r:ref
  .local k:i64, n:i64, zero:i64
  const zero, 0
  intr  c, net.accept, l
  intr  s, sel.new
  intr  k, sel.send_ref, s, ch, c
  const v, "not the connection"
  intr  _, sel.set_ref, s, k, v   ; c was not sent: it is this task's again
  const buf, "mine"
  stob  buf, buf
  const n, 4
  intr  n, net.write, c, buf, zero, n
  itos  out, n
  intr  _, sel.set_ref, s, k, c
  const n, -1
  intr  k, sel.wait, s, n         ; ch has room: sent
  spawn r, selreader, ch
  joini n, r
  const m, "|"
  sconcat out, out, m
  .try  b0, x0, h0, e
b0:
  const n, 4
  intr  n, net.write, c, buf, zero, n
x0:
  ret   out
h0:
  errmsg m, e
  sconcat out, out, m
  ret   out
.end

.func selreader(ch:ref) -> i64
  .local s:ref, c:ref, buf:ref
  .local k:i64, n:i64, zero:i64
  intr  s, sel.new
  intr  k, sel.recv, s, ch
  const n, -1
  intr  k, sel.wait, s, n
  intr  c, sel.value_ref, s
  const buf, "sel!"
  stob  buf, buf
  const zero, 0
  const n, 4
  intr  n, net.write, c, buf, zero, n
  intr  _, net.close, c
  ret   n
.end

.func hold(c:ref) -> i64
  .local n:i64
  intr  _, net.close, c
  const n, 0
  ret   n
.end
`

// countFDs counts the process's open descriptors.
func countFDs(t *testing.T) int {
	es, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(es)
}

// peerEOF reports whether the peer's next read is the end of the stream
// within d (false: it timed out, the connection is open).
func peerEOF(t *testing.T, c net.Conn, d time.Duration) bool {
	require.NoError(t, c.SetReadDeadline(time.Now().Add(d)))
	var b [16]byte
	n, err := c.Read(b[:])
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	require.Zero(t, n, "unexpected bytes %q", b[:n])
	require.ErrorIs(t, err, io.EOF)
	return true
}

// dialEventually dials addr until its listener is up.
func dialEventually(t *testing.T, addr string) net.Conn {
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			return c
		}
		require.True(t, time.Now().Before(deadline), "dial %s: %v", addr, err)
		time.Sleep(time.Millisecond)
	}
}

// TestChanMovesIOHandle: a connection sent in a message belongs to the
// task that receives it: the receiver reads and writes it, the sender's
// copy throws an IoError naming the receiver, and the descriptor is
// closed once, when the receiver ends. A connection in a message outlives
// its sender; a message never received (the host's receive, a channel
// collected with it) closes it; a send that did not happen leaves it the
// sender's; a stale copy cannot be sent. On both backends, the process's
// descriptors come back to where they were.
func TestChanMovesIOHandle(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts /proc/self/fd")
	}
	testkit.Pollers(t, func(t *testing.T) {
		b, m := timeBus(t, 2, sched.ResourceLimits{})
		p := testkit.Prog(t, b, chanFDProg+`
.func listen(addr:ref, fn:i64, ch:ref) -> ref
  .local l:ref, t:ref, out:ref, n:i64
  intr  l, net.listen, addr
  jeqi  fn, 1, f1
  jeqi  fn, 2, f2
  jeqi  fn, 3, f3
  spawn t, moved, l, ch
  joinr out, t
  intr  _, net.close, l
  ret   out
f1:
  spawn t, park, l, ch
  joini n, t
  intr  _, net.close, l
  itos  out, n
  ret   out
f2:
  spawn t, unsent, l
  joinr out, t
  intr  _, net.close, l
  ret   out
f3:
  spawn t, viasel, l, ch
  joinr out, t
  intr  _, net.close, l
  ret   out
.end
`)
		newChan := func(n int) vmloop.Value {
			ch, err := m.NewChan(vmloop.KindString, n)
			require.NoError(t, err)
			return ch
		}
		// Warm the backends and Go's netpoller: they keep descriptors.
		addr := testkit.FreeAddr(t)
		tk := testkit.Spawn(t, m, p, "listen", vmloop.Str(addr), vmloop.I64(1), newChan(1))
		c := dialEventually(t, addr)
		testkit.Await(t, tk)
		c.Close()
		runtime.GC()
		base := countFDs(t)

		t.Run("moved", func(t *testing.T) {
			addr := testkit.FreeAddr(t)
			tk := testkit.Spawn(t, m, p, "listen", vmloop.Str(addr), vmloop.I64(0), newChan(1))
			c := dialEventually(t, addr)
			defer c.Close()
			_, err := c.Write([]byte("ping"))
			require.NoError(t, err)
			var buf [4]byte
			require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
			_, err = io.ReadFull(c, buf[:])
			require.NoError(t, err)
			require.Equal(t, "ping", string(buf[:]))
			o := testkit.Await(t, tk)
			require.Equal(t, sched.Success, o.Kind, "%v", o)
			id, msg, _ := strings.Cut(o.Value.String(), "|")
			require.Regexp(t, `^net\.write: conn\(fd \d+\) belongs to task `+id+`, to which it was passed \(and which has closed it\); only its owner may use it$`, msg)
			require.True(t, peerEOF(t, c, 10*time.Second), "the receiver's end closes the connection")
		})

		t.Run("outlives its sender", func(t *testing.T) {
			addr := testkit.FreeAddr(t)
			ch := newChan(1)
			tk := testkit.Spawn(t, m, p, "listen", vmloop.Str(addr), vmloop.I64(1), ch)
			c := dialEventually(t, addr)
			defer c.Close()
			require.Equal(t, sched.Success, testkit.Await(t, tk).Kind)
			require.False(t, peerEOF(t, c, 50*time.Millisecond), "the sender's end closed a connection it had sent")
			o := testkit.SpawnAwait(t, m, p, "unpark", ch)
			require.Equal(t, sched.Success, o.Kind, "%v", o)
			var buf [4]byte
			require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
			_, err := io.ReadFull(c, buf[:])
			require.NoError(t, err)
			require.Equal(t, "late", string(buf[:]))
			require.True(t, peerEOF(t, c, 10*time.Second))
		})

		t.Run("received by the host", func(t *testing.T) {
			addr := testkit.FreeAddr(t)
			ch := newChan(1)
			tk := testkit.Spawn(t, m, p, "listen", vmloop.Str(addr), vmloop.I64(1), ch)
			c := dialEventually(t, addr)
			defer c.Close()
			testkit.Await(t, tk)
			v, err := m.Recv(context.Background(), ch)
			require.NoError(t, err)
			require.Equal(t, vmloop.KindExt, v.Kind())
			require.True(t, peerEOF(t, c, 10*time.Second), "the host owns no descriptor: its receive closes it")
			err = m.Send(context.Background(), ch, v)
			require.ErrorContains(t, err, "cannot travel in a message from the host")
		})

		t.Run("collected unreceived", func(t *testing.T) {
			addr := testkit.FreeAddr(t)
			tk := testkit.Spawn(t, m, p, "listen", vmloop.Str(addr), vmloop.I64(1), newChan(1))
			c := dialEventually(t, addr)
			defer c.Close()
			testkit.Await(t, tk)
			deadline := time.Now().Add(10 * time.Second)
			for !peerEOF(t, c, 10*time.Millisecond) {
				require.True(t, time.Now().Before(deadline), "the collected channel's message did not close its connection")
				runtime.GC()
			}
		})

		t.Run("not sent", func(t *testing.T) {
			addr := testkit.FreeAddr(t)
			tk := testkit.Spawn(t, m, p, "listen", vmloop.Str(addr), vmloop.I64(2), newChan(1))
			c := dialEventually(t, addr)
			defer c.Close()
			o := testkit.Await(t, tk)
			require.Equal(t, sched.Success, o.Kind, "%v", o)
			require.Regexp(t, `^4\|chan\.send_ref: conn\(fd \d+\) belongs to task \d+, to which it was passed; only its owner may send it$`, o.Value.String())
			var buf [4]byte
			require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
			_, err := io.ReadFull(c, buf[:])
			require.NoError(t, err)
			require.Equal(t, "mine", string(buf[:]))
			require.True(t, peerEOF(t, c, 10*time.Second))
		})

		t.Run("through selects", func(t *testing.T) {
			addr := testkit.FreeAddr(t)
			tk := testkit.Spawn(t, m, p, "listen", vmloop.Str(addr), vmloop.I64(3), newChan(1))
			c := dialEventually(t, addr)
			defer c.Close()
			o := testkit.Await(t, tk)
			require.Equal(t, sched.Success, o.Kind, "%v", o)
			require.Regexp(t, `^4\|net\.write: conn\(fd \d+\) belongs to task \d+, to which it was passed \(and which has closed it\); only its owner may use it$`, o.Value.String())
			var buf [8]byte
			require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
			_, err := io.ReadFull(c, buf[:])
			require.NoError(t, err)
			require.Equal(t, "minesel!", string(buf[:]))
			require.True(t, peerEOF(t, c, 10*time.Second))
		})

		testkit.WaitFor(t, func() bool { runtime.GC(); return countFDs(t) <= base }, "descriptors back to %d", base)
	})
}
