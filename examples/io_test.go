package examples_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"sync"
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
