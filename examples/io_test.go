package examples_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// The socket tests run echo.jasm and resp_ping.jasm in-process through the
// jade API on a free loopback port and drive them with Go clients, once
// per Linux completion backend (JADE_POLLER, read when a runtime starts).

// ioServer is a Jade program serving on a loopback port.
type ioServer struct {
	rt   *jade.Runtime
	main *jade.Task
	addr string
}

// startServer loads file on a new runtime with the given workers, runs its
// main with the address as args[0] (and args after it) and waits until the port accepts. The
// cleanup cancels main and closes the runtime; tasks left behind (a
// connection task that never ended) fail the test.
func startServer(t testing.TB, file string, workers int, args ...string) *ioServer {
	t.Helper()
	src, err := os.ReadFile(file)
	require.NoError(t, err)
	addr := testkit.FreeAddr(t)
	rt, err := jade.New(jade.Options{Workers: workers})
	require.NoError(t, err)
	s := &ioServer{rt: rt, addr: addr}
	t.Cleanup(func() { s.stop(t) })
	p, err := rt.Load(file, src)
	require.NoError(t, err)
	s.main, err = rt.Spawn(p, "main", vmloop.StrArray(append([]string{addr}, args...)))
	require.NoError(t, err)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return s
		}
		select {
		case <-hostbus.Task(s.main).Done():
			o, _ := hostbus.Task(s.main).Outcome()
			t.Fatalf("%s: main ended before listening: %s", file, o)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s does not accept: %v", file, addr, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// stop cancels main and closes the runtime (idempotent).
func (s *ioServer) stop(t testing.TB) {
	if s.rt == nil {
		return
	}
	rt := s.rt
	s.rt = nil
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if s.main != nil {
		s.main.Cancel()
		o, err := s.main.Wait(ctx)
		if err != nil {
			t.Errorf("main did not end after cancel: %v", err)
		} else if o.Kind != sched.Cancelled {
			t.Errorf("main ended %s, want Cancelled", o)
		}
	}
	if err := rt.Close(ctx); err != nil {
		t.Errorf("close: %v", err)
	}
}

// liveTasks is the number of live tasks of the runtime.
func (s *ioServer) liveTasks() int64 { return hostbus.Scheduler(s.rt).LiveTasks() }

// waitLive waits until at most n tasks are live (main and the connection
// tasks of clients still connected).
func (s *ioServer) waitLive(t testing.TB, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.liveTasks() > n {
		if time.Now().After(deadline) {
			t.Fatalf("%d live tasks, want at most %d: connection tasks did not end", s.liveTasks(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// dial connects to the server.
func (s *ioServer) dial(t testing.TB) *net.TCPConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
	require.NoError(t, err)
	return c.(*net.TCPConn)
}

// countFDs returns the number of open file descriptors of this process,
// or -1 where /proc/self/fd does not exist or does not describe this
// process: on Windows under Wine the path reaches the Linux /proc of the
// Wine process, whose descriptors are Wine's.
func countFDs() int {
	if runtime.GOOS != "linux" {
		return -1
	}
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(es) - 1 // ReadDir's own descriptor
}

// settledFDs is the lowest descriptor count seen over d (connections that
// just ended close their descriptors a little later).
func settledFDs(d time.Duration) int {
	n := countFDs()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		n = min(n, countFDs())
	}
	return n
}

// waitFDs waits until at most n descriptors are open.
func waitFDs(t testing.TB, n int, what string) {
	t.Helper()
	if n < 0 {
		return // no /proc: no check
	}
	deadline := time.Now().Add(10 * time.Second)
	for countFDs() > n {
		if time.Now().After(deadline) {
			t.Errorf("%s: %d file descriptors open, want at most %d (leak)", what, countFDs(), n)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// roundTrip writes req and reads exactly len(want) bytes, which must be
// want.
func roundTrip(c net.Conn, req, want []byte) error {
	c.SetDeadline(time.Now().Add(10 * time.Second))
	var werr error
	done := make(chan struct{})
	go func() { _, werr = c.Write(req); close(done) }()
	got := make([]byte, len(want))
	_, rerr := io.ReadFull(c, got)
	<-done
	if werr != nil {
		return fmt.Errorf("write: %w", werr)
	}
	if rerr != nil {
		return fmt.Errorf("read: %w", rerr)
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("got %q, want %q", trunc(string(got)), trunc(string(want)))
	}
	return nil
}

// TestEchoClients: concurrent clients each send messages of random sizes
// (up to 100 KB, larger than the server's 16 KiB buffer) and get them
// back byte for byte; then every connection task has ended and no
// descriptor is left open but (at most) the listener.
func TestEchoClients(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		before := countFDs()
		s := startServer(t, "echo.jasm", 2)
		const clients, rounds = 50, 40
		var wg sync.WaitGroup
		errs := make(chan error, clients)
		for i := 0; i < clients; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				c, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
				if err != nil {
					errs <- err
					return
				}
				defer c.Close()
				rng := rand.New(rand.NewPCG(uint64(i), 7))
				for r := 0; r < rounds; r++ {
					n := 1 + rng.IntN(4096)
					if r == rounds/2 {
						n = 100_000
					}
					msg := make([]byte, n)
					for j := range msg {
						msg[j] = byte(rng.Uint32())
					}
					if err := roundTrip(c, msg, msg); err != nil {
						errs <- fmt.Errorf("client %d round %d (%d bytes): %w", i, r, n, err)
						return
					}
				}
			}(i)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		// A clean close: the server closes its side after EOF.
		c := s.dial(t)
		require.NoError(t, roundTrip(c, []byte("bye"), []byte("bye")))
		c.CloseWrite()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Errorf("after our EOF: read %d, %v; want the server to close (EOF)", n, err)
		}
		c.Close()
		s.waitLive(t, 1)
		s.stop(t)
		if before >= 0 {
			waitFDs(t, before+1, "after shutdown (listener allowed)")
		}
	})
}

// TestRespPing drives resp_ping.jasm with inline, multibulk and argument
// PINGs, a 100-request pipeline in one write, every request split at every
// byte boundary, an unknown command, and malformed input.
func TestRespPing(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		before := countFDs()
		s := startServer(t, "resp_ping.jasm", 2)
		c := s.dial(t)
		defer c.Close()
		for _, rc := range []struct{ req, want string }{
			{"PING\r\n", pong},
			{"ping\n", pong},
			{multibulk("PING"), pong},
			{multibulk("pInG"), pong},
			{"PING hello\r\n", bulk("hello")},
			{multibulk("PING", "msg"), bulk("msg")},
			{multibulk("PING", strings.Repeat("z", 200_000)), bulk(strings.Repeat("z", 200_000))},
			{multibulk("PING", "a", "b"), wrongArgs},
			{"GET k\r\n", unknownReply("GET", "k")},
			{"\r\n*0\r\n", ""},
		} {
			require.NoError(t, roundTrip(c, []byte(rc.req), []byte(rc.want)), "%q", trunc(rc.req))
		}

		// 100 pipelined requests in one write, answered in order.
		var req, want strings.Builder
		for i := 0; i < 100; i++ {
			switch i % 3 {
			case 0:
				req.WriteString("PING\r\n")
				want.WriteString(pong)
			case 1:
				req.WriteString(multibulk("PING"))
				want.WriteString(pong)
			default:
				m := fmt.Sprintf("m%d", i)
				req.WriteString(multibulk("PING", m))
				want.WriteString(bulk(m))
			}
		}
		require.NoError(t, roundTrip(c, []byte(req.String()), []byte(want.String())), "pipeline of 100")

		// Every request split at every byte: prefix, a pause, the rest.
		for _, rc := range []struct{ req, want string }{
			{"PING\r\n", pong},
			{multibulk("PING"), pong},
			{"PING abc\r\n", bulk("abc")},
			{multibulk("PING", "hello world"), bulk("hello world")},
			{"PING\r\n" + multibulk("PING", "x") + "PING\r\n", pong + bulk("x") + pong},
		} {
			for i := 1; i < len(rc.req); i++ {
				c.SetDeadline(time.Now().Add(10 * time.Second))
				_, err := c.Write([]byte(rc.req[:i]))
				require.NoError(t, err)
				time.Sleep(2 * time.Millisecond)
				require.NoError(t, roundTrip(c, []byte(rc.req[i:]), []byte(rc.want)), "%q split at %d", rc.req, i)
			}
		}

		// Malformed input: a protocol error reply, then the server closes.
		for _, bad := range []struct{ req, want string }{
			{"*x\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
			{"*1\r\nPING\r\n", "-ERR Protocol error: expected '$', got 'P'\r\n"},
			{"*1\r\n$-5\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
			{"PING\r\n*1\r\n$x\r\nPING\r\n", pong + "-ERR Protocol error: invalid bulk length\r\n"},
		} {
			b := s.dial(t)
			if err := roundTrip(b, []byte(bad.req), []byte(bad.want)); err != nil {
				t.Errorf("%q: %v", bad.req, err)
			}
			b.SetReadDeadline(time.Now().Add(10 * time.Second))
			if n, err := b.Read(make([]byte, 64)); n != 0 || err == nil {
				t.Errorf("%q: after the error reply read %d, %v; want the connection closed", bad.req, n, err)
			}
			b.Close()
		}
		// The first connection is still served.
		require.NoError(t, roundTrip(c, []byte("PING\r\n"), []byte(pong)))
		c.Close()
		s.waitLive(t, 1)
		s.stop(t)
		if before >= 0 {
			waitFDs(t, before+1, "after shutdown (listener allowed)")
		}
	})
}

// goodClient keeps one well-behaved connection busy until stop is closed:
// every round trip must succeed within its deadline.
type goodClient struct {
	rounds atomic.Int64
	err    error
	done   chan struct{}
}

func startGoodClient(t *testing.T, s *ioServer, req, want []byte, stop <-chan struct{}) *goodClient {
	g := &goodClient{done: make(chan struct{})}
	c := s.dial(t)
	go func() {
		defer close(g.done)
		defer c.Close()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := roundTrip(c, req, want); err != nil {
				g.err = fmt.Errorf("good client, round %d: %w", g.rounds.Load(), err)
				return
			}
			g.rounds.Add(1)
		}
	}()
	return g
}

// TestBadPeers: peers that reset, close in the middle of a request or of
// the server's write, send garbage, or flood 1 MB without reading end only
// their own connection; a well-behaved client is served throughout, every
// bad connection's task ends and no descriptor leaks. One worker, so a
// worker stuck on a bad peer would stall the good client too.
func TestBadPeers(t *testing.T) {
	for _, prog := range []struct {
		file      string
		req, want []byte
		flood     []byte // repeated to 1 MB
	}{
		{"echo.jasm", bytes.Repeat([]byte("e"), 64), bytes.Repeat([]byte("e"), 64), []byte("flood")},
		{"resp_ping.jasm", []byte("PING\r\n"), []byte(pong), []byte("*1\r\n$4\r\nPING\r\n")},
	} {
		t.Run(strings.TrimSuffix(prog.file, ".jasm"), func(t *testing.T) {
			testkit.Pollers(t, func(t *testing.T) {
				before := countFDs()
				s := startServer(t, prog.file, 1)
				stop := make(chan struct{})
				good := startGoodClient(t, s, prog.req, prog.want, stop)
				waitRounds(t, good, 10)
				base := settledFDs(200 * time.Millisecond)

				var wg sync.WaitGroup
				bad := func(name string, f func(c *net.TCPConn) error) {
					wg.Add(1)
					go func() {
						defer wg.Done()
						c, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
						if err != nil {
							t.Errorf("%s: dial: %v", name, err)
							return
						}
						defer c.Close()
						if err := f(c.(*net.TCPConn)); err != nil {
							t.Errorf("%s: %v", name, err)
						}
					}()
				}
				for i := 0; i < 5; i++ {
					// Reset with data in flight: SO_LINGER 0 sends RST on close.
					bad("reset", func(c *net.TCPConn) error {
						c.Write(prog.req)
						c.SetLinger(0)
						return nil
					})
					// Reset while the server waits in read.
					bad("reset-idle", func(c *net.TCPConn) error {
						if err := roundTrip(c, prog.req, prog.want); err != nil {
							return err
						}
						c.SetLinger(0)
						return nil
					})
					// Half a request, then close.
					bad("close-mid-request", func(c *net.TCPConn) error {
						c.Write(prog.req[:len(prog.req)/2])
						time.Sleep(5 * time.Millisecond)
						return nil
					})
					// Close while the server writes a large reply.
					bad("close-mid-write", func(c *net.TCPConn) error {
						big := bytes.Repeat(prog.flood, (256<<10)/len(prog.flood))
						c.SetWriteDeadline(time.Now().Add(2 * time.Second))
						c.Write(big)
						c.SetLinger(0)
						return nil
					})
					// Garbage: random bytes, no newline structure.
					bad("garbage", func(c *net.TCPConn) error {
						g := make([]byte, 100_000)
						for j := range g {
							g[j] = byte(rand.Uint32())
						}
						c.SetWriteDeadline(time.Now().Add(2 * time.Second))
						c.Write(g)
						time.Sleep(20 * time.Millisecond)
						return nil
					})
				}
				// Flood 1 MB without reading, hold the connection while the
				// good client keeps going, then go away.
				bad("flood", func(c *net.TCPConn) error {
					flood := bytes.Repeat(prog.flood, (1<<20)/len(prog.flood)+1)
					c.SetWriteDeadline(time.Now().Add(3 * time.Second))
					c.Write(flood) // may stop when both directions' buffers fill
					r0 := good.rounds.Load()
					time.Sleep(300 * time.Millisecond)
					if good.rounds.Load() == r0 {
						return errors.New("the good client made no progress during the flood")
					}
					return nil
				})
				wg.Wait()
				r0 := good.rounds.Load()
				waitRounds(t, good, r0+10)
				close(stop)
				<-good.done
				require.NoError(t, good.err)
				s.waitLive(t, 1) // only main: every connection task ended
				waitFDs(t, base, "after the bad peers")
				s.stop(t)
				if before >= 0 {
					waitFDs(t, before+1, "after shutdown (listener allowed)")
				}
			})
		})
	}
}

// waitRounds waits until the good client has made n round trips.
func waitRounds(t *testing.T, g *goodClient, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for g.rounds.Load() < n {
		select {
		case <-g.done:
			t.Fatalf("good client stopped: %v", g.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("good client: %d rounds in 10 s, want %d", g.rounds.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestRespPingReader: a client that reads replies with a RESP reader while
// another goroutine writes 10,000 pipelined PINGs in small random writes.
func TestRespPingReader(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		s := startServer(t, "resp_ping.jasm", 2)
		c := s.dial(t)
		defer c.Close()
		c.SetDeadline(time.Now().Add(30 * time.Second))
		const n = 10_000
		go func() {
			rng := rand.New(rand.NewPCG(3, 4))
			var all []byte
			for i := 0; i < n; i++ {
				all = append(all, multibulk("PING", fmt.Sprint(i))...)
			}
			for len(all) > 0 {
				k := min(len(all), 1+rng.IntN(300))
				if _, err := c.Write(all[:k]); err != nil {
					return
				}
				all = all[k:]
			}
		}()
		r := bufio.NewReader(c)
		for i := 0; i < n; i++ {
			want := bulk(fmt.Sprint(i))
			got := make([]byte, len(want))
			_, err := io.ReadFull(r, got)
			require.NoError(t, err, "reply %d", i)
			if string(got) != want {
				t.Fatalf("reply %d: %q, want %q", i, got, want)
			}
		}
		c.Close()
		s.waitLive(t, 1)
	})
}
