package examples_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/vmloop"
)

// readingServer accepts connections and gives each a task that sends one
// byte ("A") and then reads: a client that has its "A" knows its task has
// a read in flight (or is about to).
const readingServer = `.abi 1.2
.func main(addr:ref) -> i64
  .local l:ref, c:ref, t:ref
  intr    l, net.listen, addr
acc:
  intr    c, net.accept, l
  spawn   t, conn, c
  free    t
  free    c
  jmp     acc
.end

.func conn(c:ref) -> i64
  .local buf:ref
  .local n:i64, zero:i64, one:i64, ch:i64
  const   zero, 0
  const   one, 1
  const   ch, 65
  bnew    buf, one
  bset    buf, zero, ch
  intr    _, net.write, c, buf, zero, one
  intr    n, net.read, c, buf, zero
  ret     n
.end
`

// selectingServer is readingServer whose connection tasks wait in a
// select on their socket (sel.readable) and a channel nobody sends on,
// instead of in a read: a readiness poll of the socket is in flight.
const selectingServer = `.abi 1.6
.func main(addr:ref) -> i64
  .local l:ref, c:ref, t:ref
  intr    l, net.listen, addr
acc:
  intr    c, net.accept, l
  spawn   t, conn, c
  free    t
  free    c
  jmp     acc
.end

.func conn(c:ref) -> i64
  .local buf:ref, s:ref, ch:ref
  .local n:i64, zero:i64, one:i64, a:i64, neg:i64
  const   zero, 0
  const   one, 1
  const   a, 65
  const   neg, -1
  bnew    buf, one
  bset    buf, zero, a
  intr    ch, chan.new_i64, zero
  intr    s, sel.new
  intr    _, sel.readable, s, c
  intr    _, sel.recv, s, ch
  intr    _, net.write, c, buf, zero, one
  intr    n, sel.wait, s, neg
  intr    n, net.read, c, buf, zero
  ret     n
.end
`

// TestStopLeavesNoDescriptorsSelecting: TestStopLeavesNoDescriptors with
// connection tasks cancelled in a select that watches their socket: the
// cancelled polls are reaped, every peer sees EOF and no descriptor is
// left (10 runs per backend, worker count and way of stopping).
func TestStopLeavesNoDescriptorsSelecting(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts /proc/self/fd")
	}
	runs, conns := 10, 50
	if testing.Short() {
		runs = 3
	}
	testkit.Pollers(t, func(t *testing.T) {
		testkit.Workers(t, []int{1, 2}, func(t *testing.T, workers int) {
			for _, how := range []string{"shutdown", "close-past-deadline"} {
				t.Run(how, func(t *testing.T) {
					var failed []string
					for run := range runs {
						if err := stopRun(t, selectingServer, workers, conns, how); err != nil {
							failed = append(failed, fmt.Sprintf("run %d: %v", run, err))
						}
					}
					require.Empty(t, failed, "%d of %d runs", len(failed), runs)
				})
			}
		})
	})
}

// TestStopLeavesNoDescriptors: a Shutdown, and a Close past its deadline,
// that cancel connection tasks with a read in flight close those tasks'
// sockets — the cancelled reads' completions are reaped before the
// workers' backends close, and so is an accept's (a client keeps dialing
// while the runtime stops). Every peer sees EOF,
// and the process has no descriptor more than before the runtime started,
// in each of 50 runs per backend, worker count and way of stopping.
func TestStopLeavesNoDescriptors(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts /proc/self/fd")
	}
	runs, conns := 50, 50
	if testing.Short() {
		runs = 10
	}
	testkit.Pollers(t, func(t *testing.T) {
		testkit.Workers(t, []int{1, 2}, func(t *testing.T, workers int) {
			for _, how := range []string{"shutdown", "close-past-deadline"} {
				t.Run(how, func(t *testing.T) {
					var failed []string
					for run := range runs {
						if err := stopRun(t, readingServer, workers, conns, how); err != nil {
							failed = append(failed, fmt.Sprintf("run %d: %v", run, err))
						}
					}
					require.Empty(t, failed, "%d of %d runs", len(failed), runs)
				})
			}
		})
	})
}

// stopRun starts src (readingServer or selectingServer), connects conns clients, stops the runtime
// the way how says, and returns an error if a peer did not see EOF or
// descriptors remain open.
func stopRun(t *testing.T, src string, workers, conns int, how string) error {
	warmNetpoll(t)
	base := countFDs()
	rt, err := jade.New(jade.Options{Workers: workers})
	require.NoError(t, err)
	p, err := rt.Load("server.jasm", []byte(src))
	require.NoError(t, err)
	addr := testkit.FreeAddr(t)
	_, err = rt.Spawn(p, "main", vmloop.Str(addr))
	require.NoError(t, err)
	cs := make([]net.Conn, 0, conns)
	defer func() {
		for _, c := range cs {
			c.Close()
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(cs) < conns {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			require.True(t, time.Now().Before(deadline), "the server does not accept: %v", err)
			time.Sleep(time.Millisecond)
			continue
		}
		cs = append(cs, c)
	}
	for i, c := range cs {
		c.SetDeadline(time.Now().Add(10 * time.Second))
		var b [1]byte
		_, err := io.ReadFull(c, b[:])
		require.NoError(t, err, "connection %d: the server's byte", i)
	}
	// New connections keep coming while the runtime stops: an accept in
	// flight may complete with one for a task already cancelled.
	stopDial := make(chan struct{})
	dialed := make(chan struct{})
	go func() {
		defer close(dialed)
		for {
			select {
			case <-stopDial:
				return
			default:
			}
			if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				c.Close()
			} else {
				time.Sleep(100 * time.Microsecond)
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	switch how {
	case "shutdown":
		require.NoError(t, rt.Shutdown(ctx))
	default:
		short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
		defer cancel()
		var de *jade.DrainError
		require.ErrorAs(t, rt.Close(short), &de)
		require.Empty(t, de.Abandoned)
	}
	close(stopDial)
	<-dialed
	var noEOF int
	eof := time.Now().Add(2 * time.Second) // one wait for all: a leak costs 2 s, not 2 s a peer
	for _, c := range cs {
		c.SetDeadline(eof)
		var b [1]byte
		if _, err := c.Read(b[:]); !errors.Is(err, io.EOF) {
			noEOF++
		}
	}
	for _, c := range cs {
		c.Close()
	}
	cs = cs[:0]
	left := countFDs() - base
	if noEOF > 0 || left > 0 {
		return fmt.Errorf("%d of %d peers saw no EOF; %d descriptors above the baseline", noEOF, conns, left)
	}
	return nil
}

// warmNetpoll makes Go's network poller open its descriptors (once per
// process) before a baseline is counted.
func warmNetpoll(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	c, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	c.Close()
}
