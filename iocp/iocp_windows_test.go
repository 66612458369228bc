//go:build windows

package iocp

// These tests run the evpoll conformance suite (package evpolltest) and
// the IOCP-specific checks on a real completion port: on Windows with
// `go test ./iocp`, and under Wine on Linux with `make windows` (see
// scripts/windows/run.sh).

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/evpoll/evpolltest"
	"github.com/jadevm/jade/sched"
	"golang.org/x/sys/windows"
)

// opener returns a suite opener for a IOCP backend with options o.
func opener(o Options) evpolltest.Opener {
	return evpolltest.Named("iocp", func() (evpoll.Backend, error) { return Open(o) })
}

// sockets make the sockets the tests drive, as package iosys does.
var sockets = evpolltest.WinSockets

// TestEchoNetPeer: the suite's echo against a net client; accept, recv
// and send are overlapped calls.
func TestEchoNetPeer(t *testing.T) {
	if st := evpolltest.EchoNetPeer(t, opener(Options{}), sockets); st.Kernel != 3 {
		t.Errorf("want accept, recv and send as overlapped calls: %v", st)
	}
}

// TestEchoBothEnds: ConnectEx and AcceptEx, round trips, EOF.
func TestEchoBothEnds(t *testing.T) { evpolltest.EchoBothEnds(t, opener(Options{}), sockets) }

// TestConnectRefused: the failed ConnectEx is a completion.
func TestConnectRefused(t *testing.T) {
	c := evpolltest.ConnectRefused(t, opener(Options{}), sockets)
	if !errors.Is(c.Err(), windows.WSAECONNREFUSED) && !errors.Is(c.Err(), windows.ERROR_CONNECTION_REFUSED) {
		t.Logf("connect refused as %v", c.Err())
	}
}

// TestCancel: a Recv in the kernel ends with -ECANCELED and FlagCancelled
// after CancelIoEx; the socket still works afterwards.
func TestCancel(t *testing.T) { evpolltest.CancelRecv(t, opener(Options{}), sockets) }

// TestCloseFailsWaiters: a Close op ends the ops in flight on its handle.
func TestCloseFailsWaiters(t *testing.T) {
	evpolltest.CloseFailsWaiters(t, opener(Options{}), sockets)
}

// TestWake: the suite's wake and coalescing checks.
func TestWake(t *testing.T) { evpolltest.Wake(t, opener(Options{})) }

// TestTimeout: Wait honours its (millisecond) timeout and never returns
// early.
func TestTimeout(t *testing.T) { evpolltest.Timeout(t, opener(Options{})) }

// TestFile: the suite's file ops; only the two opens use the pool.
func TestFile(t *testing.T) {
	if st := evpolltest.File(t, opener(Options{PoolSize: 2})); st.Pool != 2 {
		t.Errorf("Stats.Pool = %d, want 2 opens: %v", st.Pool, st)
	}
}

// TestFilePosition: two Offset -1 writes in flight at once take the
// backend-kept file position in order, and appends go to the end.
func TestFilePosition(t *testing.T) {
	h := evpolltest.Open(t, opener(Options{PoolSize: 2}))
	path := filepath.Join(t.TempDir(), "f")
	fd := h.Do(&evpoll.Op{Kind: evpoll.Open, Path: path, OpenFlags: evpoll.ReadWrite | evpoll.Create | evpoll.Truncate, Mode: 0o644}, 1)
	h.Submit(&evpoll.Op{Kind: evpoll.Write, Fd: fd, Buf: []byte("hello "), Offset: -1}, 2)
	h.Submit(&evpoll.Op{Kind: evpoll.Write, Fd: fd, Buf: []byte("world"), Offset: -1}, 3)
	if h.OK(2) != 6 || h.OK(3) != 5 {
		t.Fatal("short write")
	}
	buf := make([]byte, 32)
	if n := h.Do(&evpoll.Op{Kind: evpoll.Read, Fd: fd, Buf: buf, Offset: 0}, 4); string(buf[:n]) != "hello world" {
		t.Fatalf("read at 0 = %q", buf[:n])
	}
	h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: fd}, 5)

	afd := h.Do(&evpoll.Op{Kind: evpoll.Open, Path: path, OpenFlags: evpoll.WriteOnly | evpoll.Append}, 6)
	h.Do(&evpoll.Op{Kind: evpoll.Write, Fd: afd, Buf: []byte("!"), Offset: -1}, 7)
	h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: afd}, 8)

	rfd := h.Do(&evpoll.Op{Kind: evpoll.Open, Path: path}, 9)
	if n := h.Do(&evpoll.Op{Kind: evpoll.Read, Fd: rfd, Buf: buf, Offset: -1}, 10); string(buf[:n]) != "hello world!" {
		t.Fatalf("after append: %q", buf[:n])
	}
	h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: rfd}, 11)
	requireClosed(t, path) // every Close op closed its handle
	if st := h.B.Stats(); st.Pool != 3 {
		t.Errorf("Stats.Pool = %d, want 3 opens: %v", st.Pool, st)
	}
}

// TestErrors: synchronous failures of Submit, Cancel and Wait.
func TestErrors(t *testing.T) { evpolltest.Errors(t, opener(Options{MaxInFlight: 2})) }

// TestDefaultInFlightAboveEngineLimit: with the default options (which
// iosys.Open uses) the backend takes more ops in flight than the scheduler
// engine allows, so the engine's limit is what a busy server meets first.
func TestDefaultInFlightAboveEngineLimit(t *testing.T) {
	evpolltest.ManyInFlight(t, opener(Options{}), sched.DefaultMaxInFlightIO+1)
}

// TestCloseUnblocksWait: Close makes a blocked Wait return ErrClosed.
func TestCloseUnblocksWait(t *testing.T) { evpolltest.CloseUnblocksWait(t, opener(Options{})) }

// TestCloseWithOpsInFlight: Close cancels a Recv in the kernel, waits for
// its packet, and unblocks a Wait.
func TestCloseWithOpsInFlight(t *testing.T) {
	b, err := Open(Options{})
	require.NoError(t, err)
	h := evpolltest.NewHarness(t, b)
	a, c := h.Pair(sockets, 1)
	h.Submit(&evpoll.Op{Kind: evpoll.Recv, Fd: a, Buf: make([]byte, 8)}, 10)
	errc := make(chan error, 1)
	go func() {
		_, err := b.Wait(-1, make([]evpoll.Completion, 1))
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, b.Close())
	select {
	case err := <-errc:
		if err != nil && !errors.Is(err, evpoll.ErrClosed) {
			t.Fatalf("blocked Wait after Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wait still blocked after Close")
	}
	if p := b.(*Port); p.inKernel != 0 {
		t.Errorf("%d ops still in the kernel after Close", p.inKernel)
	}
	windows.Closesocket(windows.Handle(uintptr(a)))
	windows.Closesocket(windows.Handle(uintptr(c)))
}
