//go:build darwin || freebsd

package kqueue

// These tests run the evpoll conformance suite (package evpolltest) and
// the kqueue-specific checks on a real kqueue. CI only compiles them (go
// test -c with GOOS=darwin/freebsd); run them on a Mac or a FreeBSD machine
// with `go test ./kqueue`.

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/evpoll/evpolltest"
	"github.com/jadevm/jade/sched"
	"golang.org/x/sys/unix"
)

// opener returns a suite opener for a kqueue backend with options o.
func opener(o Options) evpolltest.Opener {
	return evpolltest.Named("kqueue", func() (evpoll.Backend, error) { return Open(o) })
}

// sockets make the sockets the tests drive, as package iosys does.
var sockets = evpolltest.UnixSockets

// assertClosed fails unless fd is closed.
func assertClosed(t *testing.T, fd int) {
	t.Helper()
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); !errors.Is(err, unix.EBADF) {
		t.Errorf("fd %d still open (fcntl: %v)", fd, err)
	}
}

// TestEchoNetPeer: the suite's echo against a client from package net.
func TestEchoNetPeer(t *testing.T) { evpolltest.EchoNetPeer(t, opener(Options{}), sockets) }

// TestEchoBothEnds: connect and accept on the backend, round trips, EOF.
func TestEchoBothEnds(t *testing.T) { evpolltest.EchoBothEnds(t, opener(Options{}), sockets) }

// TestConnectRefused: the error arrives as a completion.
func TestConnectRefused(t *testing.T) {
	if c := evpolltest.ConnectRefused(t, opener(Options{}), sockets); !errors.Is(c.Err(), unix.ECONNREFUSED) {
		t.Fatalf("connect to a closed port: %+v (%v)", c, c.Err())
	}
}

// TestCancel: a cancelled Recv ends once with -ECANCELED and
// FlagCancelled; the socket still works.
func TestCancel(t *testing.T) { evpolltest.CancelRecv(t, opener(Options{}), sockets) }

func TestPollReadable(t *testing.T) { evpolltest.PollReadable(t, opener(Options{}), sockets) }

// TestFifo: the suite's FIFO shape: opens never wait for the other end,
// and the FIFO's reads and writes are polled, so only the opens reach the
// pool.
func TestFifo(t *testing.T) {
	if st := evpolltest.Fifo(t, opener(Options{})); st.Pool != st.Ops[evpoll.Open] {
		t.Errorf("Stats.Pool = %d, want the %d opens: %v", st.Pool, st.Ops[evpoll.Open], st)
	}
}

// TestCloseFailsWaiters: a Close op ends the ops queued on its descriptor
// and closes it.
func TestCloseFailsWaiters(t *testing.T) {
	assertClosed(t, evpolltest.CloseFailsWaiters(t, opener(Options{}), sockets))
}

// TestPipe: pipes are polled, not pooled.
func TestPipe(t *testing.T) {
	h := evpolltest.Open(t, opener(Options{}))
	var p [2]int
	require.NoError(t, unix.Pipe(p[:]))
	in := make([]byte, 8)
	h.Submit(&evpoll.Op{Kind: evpoll.Read, Fd: p[0], Buf: in, Offset: -1}, 1)
	h.Do(&evpoll.Op{Kind: evpoll.Write, Fd: p[1], Buf: []byte("pipe"), Offset: -1}, 2)
	if n := h.OK(1); string(in[:n]) != "pipe" {
		t.Fatalf("pipe read %q", in[:n])
	}
	h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: p[1]}, 3)
	if n := h.Do(&evpoll.Op{Kind: evpoll.Read, Fd: p[0], Buf: in, Offset: -1}, 4); n != 0 {
		t.Fatalf("read after writer closed = %d, want EOF", n)
	}
	h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: p[0]}, 5)
	if st := h.B.Stats(); st.Pool != 0 {
		t.Errorf("pipe ops went to the pool: %v", st)
	}
}

// TestWake: the suite's wake and coalescing checks.
func TestWake(t *testing.T) { evpolltest.Wake(t, opener(Options{})) }

// TestTimeout: Wait honours its timeout and never returns early.
func TestTimeout(t *testing.T) { evpolltest.Timeout(t, opener(Options{})) }

// TestFile: file ops run on the blocking pool.
func TestFile(t *testing.T) {
	// Two opens, two writes, four reads and a close.
	if st := evpolltest.File(t, opener(Options{PoolSize: 2})); st.Pool != 9 {
		t.Errorf("Stats.Pool = %d, want 9: %v", st.Pool, st)
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
