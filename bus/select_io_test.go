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
