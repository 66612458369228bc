package examples_test

import (
	"context"
	"io"
	"net"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/draintest"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// TestCloseDrainsUnderLoad: Runtime.Close with 300 connections whose
// requests were read and whose replies are still 200 ms away: the listener
// closes (new connections refused), main's accept throws ShutdownError
// and main returns 0, every reply is delivered, and Close returns nil
// once the clients have closed — on both backends, 1 and 2 workers.
func TestCloseDrainsUnderLoad(t *testing.T) {
	conns := 300
	if testing.Short() {
		conns = 50
	}
	testkit.Pollers(t, func(t *testing.T) {
		testkit.Workers(t, []int{1, 2}, func(t *testing.T, workers int) {
			rt, main, addr := startDrainServer(t, workers)
			closed := make(chan error, 1)
			draintest.Drive(t, addr, conns, func() {
				go func() {
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					defer cancel()
					closed <- rt.Close(ctx)
				}()
			})
			o, err := main.Wait(context.Background())
			require.NoError(t, err)
			require.Equal(t, sched.Success, o.Kind, "main: %s", o)
			require.Equal(t, int64(0), o.Value.Int())
			require.NoError(t, <-closed)
		})
	})
}

// TestCloseServesTheAcceptQueue: Runtime.Close while 1,000 connections,
// each with its request sent, wait in the kernel's accept queue (main has
// not accepted yet): the drain takes them from the queue before it
// closes the listener, main's accepts return them, and every one is
// served (ack and reply); new connections are refused — on both backends,
// 1 and 2 workers. It logs what StopListening took to take the queue.
func TestCloseServesTheAcceptQueue(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("IOCP has no non-blocking accept: a drain resets the accept queue with the listener (docs/TIME-IO.md)")
	}
	conns := 1000
	if testing.Short() {
		conns = 100
	}
	testkit.Pollers(t, func(t *testing.T) {
		testkit.Workers(t, []int{1, 2}, func(t *testing.T, workers int) {
			rt, main, addr := startServerFile(t, "testdata/drain_queued.jasm", workers)
			closed := make(chan error, 1)
			draintest.DriveQueued(t, addr, conns, func() {
				t0 := time.Now()
				require.Equal(t, 1, hostbus.Bus(rt).StopListening())
				t.Logf("StopListening with %d connections queued: %v", conns, time.Since(t0))
				go func() {
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					defer cancel()
					closed <- rt.Close(ctx)
				}()
			})
			o, err := main.Wait(context.Background())
			require.NoError(t, err)
			require.Equal(t, sched.Success, o.Kind, "main: %s", o)
			require.NoError(t, <-closed)
		})
	})
}

// TestCloseDeadlineCancelsTheRest: connections whose clients never close
// keep their tasks live past Close's deadline; those are cancelled and
// listed by engine and state, with the file:line and intrinsic each
// waits in, in a *jade.DrainError, and a net.listen
// after the drain began throws ShutdownError.
func TestCloseDeadlineCancelsTheRest(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		rt, main, addr := startDrainServer(t, 1)
		var cs []net.Conn
		for range 3 {
			c, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			defer c.Close()
			cs = append(cs, c)
		}
		// Every connection has a task once its request is acknowledged.
		for _, c := range cs {
			_, err := c.Write([]byte("x"))
			require.NoError(t, err)
			b := make([]byte, 2)
			_, err = c.Read(b[:1])
			require.NoError(t, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		err := rt.Close(ctx)
		var de *jade.DrainError
		require.ErrorAs(t, err, &de)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Len(t, de.Live, 3, "the three connection tasks: %v", err)
		require.Empty(t, de.Abandoned)
		require.Contains(t, err.Error(), "3 tasks (engine main: 3 Waiting)")
		// Each is named by the line it waits at and what it waits in.
		require.Contains(t, err.Error(), "drain_server.jasm:45 (conn) in net.read for socket fd ")
		for _, c := range cs {
			require.Contains(t, err.Error(), "peer "+c.LocalAddr().String()+")", "each client is named")
		}
		require.Equal(t, 45, de.Live[0].Line)
		require.Equal(t, sched.WaitIO, de.Live[0].Wait.Kind)
		o, _ := main.Wait(context.Background())
		require.Equal(t, sched.Success, o.Kind, "main ended at the ShutdownError: %s", o)
	})
}

// TestListenDuringDrain: a net.listen after the drain began throws a
// catchable ShutdownError.
func TestListenDuringDrain(t *testing.T) {
	rt, err := jade.New(jade.Options{Workers: 1})
	require.NoError(t, err)
	p, err := rt.Load("l.jasm", []byte(`.abi 1.2
.func main(addr:ref) -> ref
  .local l:ref, e:ref, k:ref
  .try b, en, h, e
b:
  intr l, net.listen, addr
en:
  const k, "listened"
  ret k
h:
  errkind k, e
  ret k
.end
`))
	require.NoError(t, err)
	require.Equal(t, 0, hostbus.Bus(rt).StopListening())
	require.Equal(t, 0, hostbus.Bus(rt).StopListening(), "idempotent")
	task, err := rt.Spawn(p, "main", vmloop.Str(testkit.FreeAddr(t)))
	require.NoError(t, err)
	o, err := task.Wait(context.Background())
	require.NoError(t, err)
	require.Equal(t, "ShutdownError", o.Value.String())
	require.NoError(t, rt.Close(context.Background()))
}

// startDrainServer runs testdata/drain_server.jasm on a new runtime; the
// cleanup shuts the runtime down if the test did not close it.
func startDrainServer(t *testing.T, workers int) (*jade.Runtime, *jade.Task, string) {
	t.Helper()
	return startServerFile(t, "testdata/drain_server.jasm", workers)
}

// startServerFile is startDrainServer for the server in file.
func startServerFile(t *testing.T, file string, workers int) (*jade.Runtime, *jade.Task, string) {
	t.Helper()
	src, err := os.ReadFile(file)
	require.NoError(t, err)
	rt := testkit.ForcedRuntime(t, jade.Options{Workers: workers})
	p, err := rt.Load(file, src)
	require.NoError(t, err)
	addr := testkit.FreeAddr(t)
	main, err := rt.Spawn(p, "main", vmloop.StrArray([]string{addr}))
	require.NoError(t, err)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return rt, main, addr
		}
		require.True(t, time.Now().Before(deadline), "the server does not accept: %v", err)
		time.Sleep(5 * time.Millisecond)
	}
}

// TestExampleServersDrain: echo, resp_ping and http stop accepting at a
// drain's ShutdownError and return 0, after serving the connection they
// have until its client closes; http answers a request made during the
// drain with "Connection: close" and closes the connection after it.
func TestExampleServersDrain(t *testing.T) {
	cases := []struct{ file, req, reply, drained string }{
		{"echo.jasm", "ping", "ping", "ping"},
		{"resp_ping.jasm", "PING\r\n", "+PONG\r\n", "+PONG\r\n"},
		{"http.jasm", "GET / HTTP/1.1\r\nHost: a\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, World!",
			"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\nConnection: close\r\n\r\nHello, World!"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			s := startServer(t, c.file, 1)
			conn, r := rawConn(t, s.addr)
			write(t, conn, c.req)
			require.Equal(t, c.reply, readN(t, r, len(c.reply)))
			closed := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				closed <- s.rt.Close(ctx)
			}()
			o, err := s.main.Wait(context.Background())
			require.NoError(t, err)
			require.Equal(t, sched.Success, o.Kind, "main: %s", o)
			write(t, conn, c.req) // still served after main returned
			require.Equal(t, c.drained, readN(t, r, len(c.drained)))
			if c.reply != c.drained { // the server closes after it
				_, err := r.ReadByte()
				require.ErrorIs(t, err, io.EOF)
			}
			conn.Close()
			require.NoError(t, <-closed)
			s.rt, s.main = nil, nil // closed here: the cleanup has nothing to stop
		})
	}
}
