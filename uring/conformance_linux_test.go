//go:build linux

package uring

// The evpoll conformance suite, run on every backend case. kqueue and iocp
// run the same functions.

import (
	"errors"
	"testing"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/evpoll/evpolltest"
	"golang.org/x/sys/unix"
)

// TestEchoNetPeer: the suite's echo against a client from package net.
func TestEchoNetPeer(t *testing.T) {
	forEachCase(t, nil, func(t *testing.T, c backendCase, open evpolltest.Opener) {
		st := evpolltest.EchoNetPeer(t, open, sockets)
		// For io_uring, the socket I/O went through SQEs.
		if c.ring && st.Kernel != st.Submitted {
			t.Errorf("ring ran %d of %d ops in the kernel", st.Kernel, st.Submitted)
		}
	})
}

// TestEchoBothEnds: connect and accept on the backend, round trips, EOF.
func TestEchoBothEnds(t *testing.T) {
	forEachCase(t, nil, func(t *testing.T, _ backendCase, open evpolltest.Opener) {
		evpolltest.EchoBothEnds(t, open, sockets)
	})
}

// TestConnectRefused: the error of a failed connect is the completion.
func TestConnectRefused(t *testing.T) {
	forEachCase(t, nil, func(t *testing.T, _ backendCase, open evpolltest.Opener) {
		if c := evpolltest.ConnectRefused(t, open, sockets); !errors.Is(c.Err(), unix.ECONNREFUSED) {
			t.Fatalf("connect to a closed port: %v, want ECONNREFUSED", c.Err())
		}
	})
}

// TestCancelRecv: a cancelled Recv ends once, cancelled; the socket
// still works.
func TestCancelRecv(t *testing.T) {
	forEachCase(t, nil, func(t *testing.T, _ backendCase, open evpolltest.Opener) {
		evpolltest.CancelRecv(t, open, sockets)
	})
}

// TestPollReadable: a Poll waits for readability without consuming a
// byte, of a connection and of a listener, and is cancelled as any op.
func TestPollReadable(t *testing.T) {
	forEachCase(t, nil, func(t *testing.T, _ backendCase, open evpolltest.Opener) {
		evpolltest.PollReadable(t, open, sockets)
	})
}

// TestWake: the suite's wake and coalescing checks.
func TestWake(t *testing.T) {
	forEachCase(t, nil, func(t *testing.T, _ backendCase, open evpolltest.Opener) {
		evpolltest.Wake(t, open)
	})
}

// TestTimeout: Wait honours its timeout; Wait(0) returns a Nop.
func TestTimeout(t *testing.T) {
	forEachCase(t, nil, func(t *testing.T, _ backendCase, open evpolltest.Opener) {
		evpolltest.Timeout(t, open)
	})
}

// TestFile: the suite's file ops.
func TestFile(t *testing.T) {
	forEachCase(t, nil, func(t *testing.T, c backendCase, open evpolltest.Opener) {
		// Two opens, two writes, four reads and a close: epoll runs all
		// nine on its blocking pool.
		if st := evpolltest.File(t, open); !c.ring && st.Pool != 9 {
			t.Errorf("Stats.Pool = %d, want 9: %v", st.Pool, st)
		}
	})
}

// TestErrors: synchronous failures of Submit, Cancel, Wait and Wake.
func TestErrors(t *testing.T) {
	for _, c := range backendCases {
		t.Run(c.name, func(t *testing.T) {
			evpolltest.Errors(t, caseOpener(c, func(o *Options) { o.MaxInFlight = 2 }))
		})
	}
}

// TestCloseUnblocksWait runs on shared rings and epoll only: an owner
// ring's Wait may not run on another goroutine.
func TestCloseUnblocksWait(t *testing.T) {
	forEachCase(t, func(c backendCase) bool { return c.opts.OwnerThread }, func(t *testing.T, _ backendCase, open evpolltest.Opener) {
		evpolltest.CloseUnblocksWait(t, open)
	})
}

// TestFifo: the suite's FIFO shape. Opens never wait for the other end
// (ENXIO for a writer without a reader) on either backend; epoll polls
// the FIFO's reads and writes instead of blocking the caller in them, so
// only the opens reach its pool.
func TestFifo(t *testing.T) {
	forEachCase(t, nil, func(t *testing.T, c backendCase, open evpolltest.Opener) {
		st := evpolltest.Fifo(t, open)
		if !c.ring && st.Pool != st.Ops[evpoll.Open] {
			t.Errorf("Stats.Pool = %d, want the %d opens: %v", st.Pool, st.Ops[evpoll.Open], st)
		}
	})
}
