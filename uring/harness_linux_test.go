//go:build linux

package uring

import (
	"errors"
	"net"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/jadevm/jade/evpoll"
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
			tb.Skipf("io_uring_setup refused on this machine: %v", err)
		}
		tb.Fatalf("open %s: %v", c.name, err)
	}
	if b.Name() != map[bool]string{true: "io_uring", false: "epoll"}[c.ring] {
		tb.Fatalf("open %s: got backend %s", c.name, b.Name())
	}
	return b
}

// forEachBackend runs fn as a subtest per backend. The subtest's goroutine
// is locked to its OS thread (owner-thread rings require it), the backend
// is closed before the thread is unlocked, and no descriptor may leak.
func forEachBackend(t *testing.T, adjust func(*Options), fn func(t *testing.T, h *harness)) {
	for _, c := range backendCases {
		t.Run(c.name, func(t *testing.T) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			before := countFDs(t)
			b := openCase(t, c, adjust)
			h := &harness{t: t, b: b, c: c, got: map[evpoll.Token]evpoll.Completion{}}
			func() {
				defer func() {
					if err := b.Close(); err != nil {
						t.Errorf("close: %v", err)
					}
				}()
				fn(t, h)
			}()
			if after := countFDs(t); after != before {
				t.Errorf("descriptor leak: %d open before, %d after", before, after)
			}
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

// harness collects completions by token and fails on duplicates.
type harness struct {
	t   *testing.T
	b   evpoll.Backend
	c   backendCase
	got map[evpoll.Token]evpoll.Completion
	buf [16]evpoll.Completion
}

func (h *harness) submit(op *evpoll.Op, tok evpoll.Token) evpoll.OpID {
	h.t.Helper()
	id, err := h.b.Submit(op, tok)
	if err != nil {
		h.t.Fatalf("submit %v: %v", op.Kind, err)
	}
	return id
}

// poll runs one Wait and records what it returned.
func (h *harness) poll(timeout time.Duration) int {
	h.t.Helper()
	n, err := h.b.Wait(timeout, h.buf[:])
	if err != nil {
		h.t.Fatalf("wait: %v", err)
	}
	for _, c := range h.buf[:n] {
		if _, dup := h.got[c.Token]; dup {
			h.t.Fatalf("token %d completed twice", c.Token)
		}
		h.got[c.Token] = c
	}
	return n
}

// wait returns tok's completion, waiting up to 5 s.
func (h *harness) wait(tok evpoll.Token) evpoll.Completion {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if c, ok := h.got[tok]; ok {
			return c
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("token %d: no completion after 5s (pending %d)", tok, h.b.Pending())
		}
		h.poll(100 * time.Millisecond)
	}
}

// ok waits for tok and fails on an error result.
func (h *harness) ok(tok evpoll.Token) int {
	h.t.Helper()
	c := h.wait(tok)
	if c.Res < 0 {
		h.t.Fatalf("token %d: %v", tok, c.Err())
	}
	return int(c.Res)
}

// do submits op and waits for its successful result.
func (h *harness) do(op *evpoll.Op, tok evpoll.Token) int {
	h.t.Helper()
	h.submit(op, tok)
	return h.ok(tok)
}
