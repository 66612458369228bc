//go:build linux

package uring

import (
	"errors"
	"net"
	"os"
	"runtime"
	"testing"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/evpoll/evpolltest"
	"github.com/jadevm/jade/internal/feature"
	"golang.org/x/sys/unix"
)

// backendCase is one row of the table every I/O test runs over.
type backendCase struct {
	name string
	opts Options
	ring bool // an io_uring row (skipped when io_uring_setup is refused)
}

var backendCases = []backendCase{
	{name: "io_uring", opts: Options{Poller: "uring"}, ring: true},
	{name: "io_uring-owner", opts: Options{Poller: "uring", OwnerThread: true}, ring: true},
	{name: "io_uring-eventfd", opts: Options{Poller: "uring", Wake: "eventfd"}, ring: true},
	{name: "io_uring-owner-eventfd", opts: Options{Poller: "uring", OwnerThread: true, Wake: "eventfd"}, ring: true},
	{name: "epoll", opts: Options{Poller: "epoll"}},
}

func TestMain(m *testing.M) {
	// Start Go's own netpoller (its epoll fd and eventfd live for the whole
	// process) before any fd-leak accounting.
	if ln, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
		ln.Close()
	}
	os.Exit(m.Run())
}

// openCase opens the backend of c with extra options applied.
func openCase(tb testing.TB, c backendCase, adjust func(*Options)) evpoll.Backend {
	tb.Helper()
	o := c.opts
	if adjust != nil {
		adjust(&o)
	}
	b, err := Open(o)
	if err != nil {
		if c.ring && (errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM)) {
			feature.Missing(tb, "io_uring", err)
		}
		tb.Fatalf("open %s: %v", c.name, err)
	}
	if b.Name() != map[bool]string{true: "io_uring", false: "epoll"}[c.ring] {
		tb.Fatalf("open %s: got backend %s", c.name, b.Name())
	}
	return b
}

// caseOpener returns an opener for c (with extra options applied) for
// the conformance suite. It locks the test goroutine to its OS thread
// (owner-thread rings require it) until the backend is closed, and fails
// the test if a descriptor leaks.
func caseOpener(c backendCase, adjust func(*Options)) evpolltest.Opener {
	return func(t *testing.T) evpoll.Backend {
		t.Helper()
		runtime.LockOSThread()
		t.Cleanup(runtime.UnlockOSThread)
		before := countFDs(t)
		b := openCase(t, c, adjust)
		t.Cleanup(func() {
			if after := countFDs(t); after != before {
				t.Errorf("descriptor leak: %d open before, %d after", before, after)
			}
		})
		return b
	}
}

// sockets make the sockets the tests drive, as package iosys does.
var sockets = evpolltest.UnixSockets

// forEachCase runs fn as a subtest per backend case, with an opener for
// the conformance suite. Cases with skip(c) true are left out.
func forEachCase(t *testing.T, skip func(backendCase) bool, fn func(t *testing.T, c backendCase, open evpolltest.Opener)) {
	for _, c := range backendCases {
		if skip != nil && skip(c) {
			continue
		}
		t.Run(c.name, func(t *testing.T) { fn(t, c, caseOpener(c, nil)) })
	}
}

// forEachBackend runs fn as a subtest per backend, on a harness that the
// suite's opener made: the subtest's goroutine is locked to its OS thread,
// the backend is closed before the thread is unlocked, and no descriptor
// may leak.
func forEachBackend(t *testing.T, adjust func(*Options), fn func(t *testing.T, h *harness)) {
	for _, c := range backendCases {
		t.Run(c.name, func(t *testing.T) {
			fn(t, &harness{Harness: evpolltest.Open(t, caseOpener(c, adjust)), c: c})
		})
	}
}

func countFDs(tb testing.TB) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		tb.Fatalf("read /proc/self/fd: %v", err)
	}
	return len(ents)
}

// harness is the suite's harness plus the backend case it runs on.
type harness struct {
	*evpolltest.Harness
	c backendCase
}
