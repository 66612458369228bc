//go:build linux

package bus_test

import (
	"context"
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

const selIOProg = `
.abi 1.6
; sel_read: connect; wait on case 0 readable(conn), case 1 recv(ch) with
; a deadline of d ns (time.timeout t first when t > 0). Returns
; "read:<bytes>", "chan:<v>", "deadline" or the error kind; then, on
; "chan" and "deadline", reads once more: the bytes after a ":".
.func sel_read(addr:ref, ch:ref, d:i64, tmo:i64) -> ref
  .local c:ref, s:ref, buf:ref, k:i64, n:i64, z:i64, sz:i64, v:i64, e:ref, r:ref, x:ref
  intr  c, net.connect, addr
  const sz, 64
  bnew  buf, sz
  const z, 0
  intr  s, sel.new
  intr  _, sel.readable, s, c
  intr  _, sel.recv, s, ch
  jlei  tmo, 0, w
  intr  _, time.timeout, tmo
w:
  .try  b, bx, h, e
b:
  intr  k, sel.wait, s, d
bx:
  jeqi  k, 0, rd
  jeqi  k, 1, chv
  const r, "deadline"
  jmp   more
chv:
  intr  v, sel.value_i64, s
  const r, "chan"
  jmp   more
rd:
  intr  n, net.read, c, buf, z
  const r, "read:"
  bslice x, buf, z, n
  btos  x, x
  sconcat r, r, x
  ret   r
more:
  intr  n, net.read, c, buf, z
  const x, ":"
  sconcat r, r, x
  bslice x, buf, z, n
  btos  x, x
  sconcat r, r, x
  ret   r
h:
  errkind r, e
  jmp   more
.end

; sel_accept: listen; tell the host the address on ch (as a string
; channel it is a ref channel); wait on case 0 acceptable(l), case 1 the
; drain. Returns "accepted", "drain" or the error kind of the accept.
.func sel_accept(addr:ref, ch:ref) -> ref
  .local l:ref, s:ref, d:ref, k:i64, neg:i64, c:ref, e:ref, r:ref
  intr  l, net.listen, addr
  intr  s, sel.new
  intr  _, sel.acceptable, s, l
  intr  d, chan.drain
  intr  _, sel.recv, s, d
  const neg, -1
  intr  _, chan.send_i64, ch, neg
  intr  k, sel.wait, s, neg
  jeqi  k, 1, dr
  .try  b, bx, h, e
b:
  intr  c, net.accept, l
bx:
  const r, "accepted"
  ret   r
h:
  errkind r, e
  ret   r
dr:
  const r, "drain"
  ret   r
.end

; chan_wins: connect; n times wait on case 0 readable(conn), case 1
; recv(ch) (the host sends on ch, the socket stays silent); then park in
; a plain receive on done. Returns the number of channel case fires.
.func chan_wins(addr:ref, ch:ref, done:ref, n:i64) -> i64
  .local c:ref, s:ref, k:i64, neg:i64, wins:i64, v:i64
  intr  c, net.connect, addr
  const neg, -1
  const wins, 0
  intr  s, sel.new
  intr  _, sel.readable, s, c
  intr  _, sel.recv, s, ch
loop:
  jeqi  n, 0, park
  intr  k, sel.wait, s, neg
  subi  n, n, 1
  jeqi  k, 0, loop
  addi  wins, wins, 1
  jmp   loop
park:
  intr  v, chan.recv_i64, done
  ret   wins
.end

; closed_case: connect; add a readable case; close the connection;
; wait: the case fires at once, and the read after it throws. Returns
; the error kind of the read.
.func closed_case(addr:ref) -> ref
  .local c:ref, s:ref, buf:ref, k:i64, neg:i64, z:i64, n:i64, e:ref, r:ref
  intr  c, net.connect, addr
  const z, 8
  bnew  buf, z
  const z, 0
  const neg, -1
  intr  s, sel.new
  intr  _, sel.readable, s, c
  intr  _, net.close, c
  intr  k, sel.wait, s, neg
  .try  b, bx, h, e
b:
  intr  n, net.read, c, buf, z
bx:
  const r, "read"
  ret   r
h:
  errkind r, e
  ret   r
.end

; fair: connect; wait once for the socket to become readable (its
; bytes are never read, so it stays readable), then n times on case 0
; readable(conn), case 1 recv(ch) (ch holds n values): returns how often
; the socket's case fired.
.func fair(addr:ref, ch:ref, n:i64) -> i64
  .local c:ref, s:ref, r:ref, k:i64, neg:i64, hits:i64, v:i64
  intr  c, net.connect, addr
  const neg, -1
  intr  r, sel.new
  intr  _, sel.readable, r, c
  intr  k, sel.wait, r, neg
  intr  s, sel.new
  intr  _, sel.readable, s, c
  intr  _, sel.recv, s, ch
  const hits, 0
loop:
  jeqi  n, 0, out
  subi  n, n, 1
  intr  k, sel.wait, s, neg
  jeqi  k, 1, loop
  addi  hits, hits, 1
  jmp   loop
out:
  ret   hits
.end

; hammer: connect; count the bytes read and the sum of the values
; received on ch until both the stream's end and the channel's: the read
; case and the receive case race at every wait. Returns
; bytes*1048576 + sum.
.func hammer(addr:ref, ch:ref) -> i64
  .local c:ref, s:ref, s2:ref, buf:ref, k:i64, n:i64, z:i64, sz:i64, neg:i64
  .local total:i64, sum:i64, v:i64, x:i64, eof:i64, cl:i64
  intr  c, net.connect, addr
  const sz, 1500
  bnew  buf, sz
  const z, 0
  const neg, -1
  const total, 0
  const sum, 0
  const eof, 0
  const cl, 0
  intr  s, sel.new
  intr  _, sel.readable, s, c
  intr  _, sel.recv, s, ch
  intr  s2, sel.new
  intr  _, sel.recv, s2, ch
loop:
  jeqi  eof, 1, chonly
  jeqi  cl, 1, rdonly
  intr  k, sel.wait, s, neg
  jeqi  k, 0, rd
  intr  x, sel.closed, s
  jeqi  x, 1, setcl
  intr  v, sel.value_i64, s
  add   sum, sum, v
  jmp   loop
setcl:
  const cl, 1
  jmp   loop
rd:
  intr  n, net.read, c, buf, z
  jeqi  n, 0, seteof
  add   total, total, n
  jmp   loop
seteof:
  const eof, 1
  jmp   loop
rdonly:
  intr  n, net.read, c, buf, z
  jeqi  n, 0, done
  add   total, total, n
  jmp   rdonly
chonly:
  jeqi  cl, 1, done
  intr  k, sel.wait, s2, neg
  intr  x, sel.closed, s2
  jeqi  x, 1, done
  intr  v, sel.value_i64, s2
  add   sum, sum, v
  jmp   chonly
done:
  muli  total, total, 1048576
  add   total, total, sum
  ret   total
.end
`

func selIOBus(t *testing.T, workers int) (*bus.Bus, *bus.Member, *vmloop.Program) {
	t.Helper()
	var m *bus.Member
	b := testkit.Bus(t, bus.Config{Workers: workers}, func(b *bus.Bus) {
		m = testkit.Engine(t, b, "io", sched.EngineRuntimeConfig{TimerWheel: testkit.Wheel()}, bus.CapAll)
	})
	return b, m, testkit.Prog(t, b, selIOProg)
}

// peer is a Go listener whose accepted connections come out of a channel.
func peer(t *testing.T) (string, <-chan net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	conns := make(chan net.Conn, 64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
			conns <- c
		}
	}()
	return ln.Addr().String(), conns
}

func accepted(t *testing.T, conns <-chan net.Conn) net.Conn {
	t.Helper()
	select {
	case c := <-conns:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("the task did not connect")
		return nil
	}
}

// waitingIn waits until task is Waiting in an operation that in accepts
// (its report's Wait.Op).
func waitingIn(t *testing.T, b *bus.Bus, task *sched.Task, in func(op string) bool) {
	t.Helper()
	testkit.WaitFor(t, func() bool {
		for _, r := range b.Scheduler().Tasks() {
			if r.ID == task.ID() {
				return r.State == sched.Waiting && r.Wait != nil && in(r.Wait.Op)
			}
		}
		return false
	}, "task %d waits past its connect", task.ID())
}

// pastConnect waits until task waits in something after its net.connect
// (the select, or the read after a deadline or timeout that fired
// already): bytes written from then on arrive while the select's clock
// runs, however late the task was scheduled after its connect.
func pastConnect(t *testing.T, b *bus.Bus, task *sched.Task) {
	t.Helper()
	waitingIn(t, b, task, func(op string) bool { return op != "net.connect" })
}

// noOpsLeft waits until m's engine has no I/O operation in flight: the
// polls of ended waits were cancelled and reaped.
func noOpsLeft(t *testing.T, m *bus.Member) {
	t.Helper()
	require.Eventually(t, func() bool { return m.Engine().InFlightIO() == 0 }, 5*time.Second, time.Millisecond,
		"%d operations still in flight", m.Engine().InFlightIO())
}

// TestSelectReadable: a readable case fires when bytes arrive, and the
// read after it gets them; a receive case that wins leaves every byte to
// the next read, as do the select's own deadline and time.timeout
// (TimeoutError); a case whose socket was closed fires, and the read
// after it throws IoError; a cancelled selecting task leaves no poll in
// flight and its socket is closed. On both backends.
func TestSelectReadable(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		b, m, p := selIOBus(t, 2)
		addr, conns := peer(t)
		ctx := context.Background()
		run := func(d, tmo int64, act func(c net.Conn, ch vmloop.Value)) string {
			ch, err := m.NewChan(vmloop.KindI64, 0)
			require.NoError(t, err)
			task := testkit.Spawn(t, m, p, "sel_read", vmloop.Str(addr), ch, vmloop.I64(d), vmloop.I64(tmo))
			c := accepted(t, conns)
			pastConnect(t, b, task)
			act(c, ch)
			o := testkit.Await(t, task)
			require.Equal(t, sched.Success, o.Kind, "%v", o)
			noOpsLeft(t, m)
			return o.Value.String()
		}
		require.Equal(t, "read:hello", run(-1, 0, func(c net.Conn, _ vmloop.Value) {
			_, err := c.Write([]byte("hello"))
			require.NoError(t, err)
		}))
		require.Equal(t, "chan:late", run(-1, 0, func(c net.Conn, ch vmloop.Value) {
			require.NoError(t, m.Send(ctx, ch, vmloop.I64(7)))
			_, err := c.Write([]byte("late"))
			require.NoError(t, err)
		}))
		require.Equal(t, "deadline:after", run(int64(20*time.Millisecond), 0, func(c net.Conn, _ vmloop.Value) {
			time.Sleep(60 * time.Millisecond)
			_, err := c.Write([]byte("after"))
			require.NoError(t, err)
		}))
		require.Equal(t, vmloop.ErrKindTimeout+":after", run(-1, int64(20*time.Millisecond), func(c net.Conn, _ vmloop.Value) {
			time.Sleep(60 * time.Millisecond)
			_, err := c.Write([]byte("after"))
			require.NoError(t, err)
		}))

		// A case whose socket was closed fires, and the read says why.
		task := testkit.Spawn(t, m, p, "closed_case", vmloop.Str(addr))
		accepted(t, conns)
		o := testkit.Await(t, task)
		require.Equal(t, vmloop.ErrKindIO, o.Value.String(), "%v", o)
		noOpsLeft(t, m)

		// A cancel of the parked select: no poll left, the socket closed.
		ch, err := m.NewChan(vmloop.KindI64, 0)
		require.NoError(t, err)
		task = testkit.Spawn(t, m, p, "sel_read", vmloop.Str(addr), ch, vmloop.I64(-1), vmloop.I64(0))
		c := accepted(t, conns)
		// Parked in the select, not in the connect before it (also
		// Waiting, with its own operation in flight until it is reaped).
		waitingIn(t, b, task, func(op string) bool { return op == "sel.wait" })
		require.Positive(t, m.Engine().InFlightIO(), "the parked select watches its socket")
		require.NoError(t, m.Cancel(task))
		require.Equal(t, sched.Cancelled, testkit.Await(t, task).Kind)
		noOpsLeft(t, m)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = io.ReadAll(c)
		require.NoError(t, err, "the cancelled task's socket was not closed")
	})
}

// TestSelectLeavesNoPolls: a select whose receive case wins again and
// again while its socket stays silent leaves no poll behind: the polls
// of the waits the channel won are cancelled and reaped, so a task that
// then waits elsewhere has no operation in flight, on both backends.
func TestSelectLeavesNoPolls(t *testing.T) {
	const waits = 200
	testkit.Pollers(t, func(t *testing.T) {
		_, m, p := selIOBus(t, 2)
		addr, conns := peer(t)
		ctx := context.Background()
		ch, err := m.NewChan(vmloop.KindI64, 0)
		require.NoError(t, err)
		done, err := m.NewChan(vmloop.KindI64, 0)
		require.NoError(t, err)
		task := testkit.Spawn(t, m, p, "chan_wins", vmloop.Str(addr), ch, done, vmloop.I64(waits))
		accepted(t, conns)
		for range waits {
			require.NoError(t, m.Send(ctx, ch, vmloop.I64(1)))
		}
		waitState(t, task, sched.Waiting) // in chan.recv of done
		noOpsLeft(t, m)
		require.NoError(t, m.Send(ctx, done, vmloop.I64(1)))
		o := testkit.Await(t, task)
		require.Equal(t, sched.Success, o.Kind, "%v", o)
		require.Equal(t, int64(waits), o.Value.Int())
	})
}

// TestSelectReadableFair: when the socket's case and a receive case are
// both ready, each is chosen about half the time (the socket's readiness
// is looked at only when it could decide the wait, never skipped when it
// comes first in the random order), on both backends.
func TestSelectReadableFair(t *testing.T) {
	const waits = 400
	testkit.Pollers(t, func(t *testing.T) {
		_, m, p := selIOBus(t, 1)
		addr, conns := peer(t)
		ch, err := m.NewChan(vmloop.KindI64, waits)
		require.NoError(t, err)
		for range waits {
			require.NoError(t, m.Send(context.Background(), ch, vmloop.I64(1)))
		}
		task := testkit.Spawn(t, m, p, "fair", vmloop.Str(addr), ch, vmloop.I64(waits))
		c := accepted(t, conns)
		_, err = c.Write([]byte("x"))
		require.NoError(t, err)
		o := testkit.Await(t, task)
		require.Equal(t, sched.Success, o.Kind, "%v", o)
		// Binomial(400, 1/2): 200 ± 10; 120..280 is 8 standard deviations.
		require.InDelta(t, waits/2, o.Value.Int(), 80, "the socket's case fired %d of %d times", o.Value.Int(), waits)
	})
}

// TestSelectAcceptable: an acceptable case fires when a connection
// waits, and the accept after it takes it; at the drain, the drain case
// fires, or the acceptable case and the accept throws ShutdownError.
func TestSelectAcceptable(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		b, m, p := selIOBus(t, 2)
		ctx := context.Background()
		start := func() (*sched.Task, string) {
			ch, err := m.NewChan(vmloop.KindI64, 0)
			require.NoError(t, err)
			addr := testkit.FreeAddr(t)
			task := testkit.Spawn(t, m, p, "sel_accept", vmloop.Str(addr), ch)
			_, err = m.Recv(ctx, ch) // listening
			require.NoError(t, err)
			waitState(t, task, sched.Waiting)
			return task, addr
		}
		task, addr := start()
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		o := testkit.Await(t, task)
		require.Equal(t, "accepted", o.Value.String(), "%v", o)
		noOpsLeft(t, m)

		task, _ = start()
		b.StopListening()
		o = testkit.Await(t, task)
		require.Contains(t, []string{"drain", vmloop.ErrKindShutdown}, o.Value.String(), "%v", o)
		noOpsLeft(t, m)
	})
}

// TestSelectReadExactlyOnce: a read case races a receive case at every
// wait — bytes arrive in small writes while a host sends on the channel —
// and every byte sent is read by the program, and every value received,
// on both backends at 1, 2 and 4 workers: a losing read case consumed
// nothing.
func TestSelectReadExactlyOnce(t *testing.T) {
	const conns, chunks, sends = 4, 400, 1000
	testkit.Pollers(t, func(t *testing.T) {
		testkit.Workers(t, []int{1, 2, 4}, func(t *testing.T, workers int) {
			_, m, p := selIOBus(t, workers)
			addr, accepts := peer(t)
			ctx := context.Background()
			type job struct {
				task *sched.Task
				sent int
			}
			jobs := make([]job, conns)
			done := make(chan error, 2*conns)
			for i := range jobs {
				ch, err := m.NewChan(vmloop.KindI64, 0)
				require.NoError(t, err)
				jobs[i].task = testkit.Spawn(t, m, p, "hammer", vmloop.Str(addr), ch)
				c := accepted(t, accepts)
				sent := 0
				for k := range chunks {
					sent += 1 + (k*7+i)%200
				}
				jobs[i].sent = sent
				go func() {
					var err error
					for k := 0; k < chunks && err == nil; k++ {
						_, err = c.Write([]byte(strings.Repeat("x", 1+(k*7+i)%200)))
						if k%16 == 0 {
							time.Sleep(50 * time.Microsecond)
						}
					}
					if err == nil {
						err = c.(*net.TCPConn).CloseWrite()
					}
					done <- err
				}()
				go func() {
					var err error
					for k := 0; k < sends && err == nil; k++ {
						err = m.Send(ctx, ch, vmloop.I64(1))
					}
					if err == nil {
						err = m.CloseChan(ch)
					}
					done <- err
				}()
			}
			for range 2 * conns {
				require.NoError(t, <-done)
			}
			for i, j := range jobs {
				o := testkit.Await(t, j.task)
				require.Equal(t, sched.Success, o.Kind, "%v", o)
				got := o.Value.Int()
				require.Equal(t, int64(j.sent), got>>20, "connection %d: bytes read", i)
				require.Equal(t, int64(sends), got&(1<<20-1), "connection %d: values received", i)
			}
			noOpsLeft(t, m)
		})
	})
}
