// Package evpolltest is the conformance suite of the [evpoll.Backend]
// contract. Every backend package (uring, kqueue, iocp) calls these
// functions from its own tests, so the backends provably pass the same
// tests; backend-specific checks stay in the backend's package, usually on
// the [evpoll.Stats] or [evpoll.Completion] a suite function returns.
//
// The package uses only the standard library, evpoll and, on Unix,
// evpoll/unixsock: socket set-up goes through [Sockets] made the way the
// runtime makes them ([UnixSockets], [WinSockets]), and
// all other I/O goes through the backend under test.
package evpolltest

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/jadevm/jade/internal/evpoll"
)

// Opener opens a fresh backend for one test. It may register t.Cleanup
// functions of its own (descriptor-leak checks, unlocking an OS thread);
// they run after the suite has closed the backend. An opener that cannot
// open the backend fails or skips t.
type Opener func(t *testing.T) evpoll.Backend

// Sockets make the sockets a backend's tests drive, the way the backend
// needs them (non-blocking, overlapped, close-on-exec).
type Sockets interface {
	// Listen returns a listening TCP socket bound to addr ("ip:port").
	Listen(addr string) (int, error)
	// Socket returns an unconnected TCP socket of ap's family.
	Socket(ap netip.AddrPort) (int, error)
	// LocalAddr returns the address fd is bound to.
	LocalAddr(fd int) (netip.AddrPort, error)
}

// SocketFuncs adapts three socket functions to [Sockets].
type SocketFuncs struct {
	ListenFunc    func(ap netip.AddrPort) (int, error)
	SocketFunc    func(ap netip.AddrPort) (int, error)
	LocalAddrFunc func(fd int) (netip.AddrPort, error)
}

// Listen parses addr and calls f.ListenFunc.
func (f SocketFuncs) Listen(addr string) (int, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return -1, err
	}
	return f.ListenFunc(ap)
}

// Socket calls f.SocketFunc.
func (f SocketFuncs) Socket(ap netip.AddrPort) (int, error) { return f.SocketFunc(ap) }

// LocalAddr calls f.LocalAddrFunc.
func (f SocketFuncs) LocalAddr(fd int) (netip.AddrPort, error) { return f.LocalAddrFunc(fd) }

// Harness drives one backend in a test: it submits ops, collects
// completions by token and fails the test on a duplicate completion.
type Harness struct {
	T   *testing.T
	B   evpoll.Backend
	Got map[evpoll.Token]evpoll.Completion
	buf [16]evpoll.Completion
}

// NewHarness returns a harness for b. It does not close b.
func NewHarness(t *testing.T, b evpoll.Backend) *Harness {
	return &Harness{T: t, B: b, Got: map[evpoll.Token]evpoll.Completion{}}
}

// Open opens a backend with open, registers its Close (which must succeed)
// as a cleanup of t, and returns a harness for it.
func Open(t *testing.T, open Opener) *Harness {
	t.Helper()
	b := open(t)
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return NewHarness(t, b)
}

// Submit submits op for tok and fails the test on an error.
func (h *Harness) Submit(op *evpoll.Op, tok evpoll.Token) evpoll.OpID {
	h.T.Helper()
	id, err := h.B.Submit(op, tok)
	if err != nil {
		h.T.Fatalf("submit %v: %v", op.Kind, err)
	}
	return id
}

// Poll runs one Wait and records what it returned.
func (h *Harness) Poll(timeout time.Duration) int {
	h.T.Helper()
	n, err := h.B.Wait(timeout, h.buf[:])
	if err != nil {
		h.T.Fatalf("wait: %v", err)
	}
	for _, c := range h.buf[:n] {
		if _, dup := h.Got[c.Token]; dup {
			h.T.Fatalf("token %d completed twice", c.Token)
		}
		h.Got[c.Token] = c
	}
	return n
}

// Wait returns tok's completion, waiting up to 5 s.
func (h *Harness) Wait(tok evpoll.Token) evpoll.Completion {
	h.T.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if c, ok := h.Got[tok]; ok {
			return c
		}
		if time.Now().After(deadline) {
			h.T.Fatalf("token %d: no completion after 5s (pending %d)", tok, h.B.Pending())
		}
		h.Poll(100 * time.Millisecond)
	}
}

// OK waits for tok and fails the test on an error result.
func (h *Harness) OK(tok evpoll.Token) int {
	h.T.Helper()
	c := h.Wait(tok)
	if c.Res < 0 {
		h.T.Fatalf("token %d: %v", tok, c.Err())
	}
	return int(c.Res)
}

// Do submits op and waits for its successful result.
func (h *Harness) Do(op *evpoll.Op, tok evpoll.Token) int {
	h.T.Helper()
	h.Submit(op, tok)
	return h.OK(tok)
}

// Listen returns a listening socket on a free loopback port and its
// address.
func Listen(t *testing.T, s Sockets) (int, netip.AddrPort) {
	t.Helper()
	fd, err := s.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ap, err := s.LocalAddr(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fd, ap
}

// Pair returns a connected pair of sockets (accepted, connected), both
// made through the backend with tokens tok, tok+1 and tok+2, and closes the
// listener.
func (h *Harness) Pair(s Sockets, tok evpoll.Token) (int, int) {
	h.T.Helper()
	lfd, ap := Listen(h.T, s)
	cfd, err := s.Socket(ap)
	if err != nil {
		h.T.Fatal(err)
	}
	h.Submit(&evpoll.Op{Kind: evpoll.Accept, Fd: lfd}, tok)
	h.Submit(&evpoll.Op{Kind: evpoll.Connect, Fd: cfd, Addr: ap}, tok+1)
	sfd := h.OK(tok)
	h.OK(tok + 1)
	h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: lfd}, tok+2)
	return sfd, cfd
}

// Named returns an opener that opens a backend with open and fails the
// test unless it opened and its Name is name.
func Named(name string, open func() (evpoll.Backend, error)) Opener {
	return func(t *testing.T) evpoll.Backend {
		t.Helper()
		b, err := open()
		if err != nil {
			t.Fatalf("open %s: %v", name, err)
		}
		if b.Name() != name {
			b.Close()
			t.Fatalf("open %s: Name() = %q", name, b.Name())
		}
		return b
	}
}

// Unsupported checks what Open returned on an OS the backend does not
// support: a nil backend and an error wrapping both
// [errors.ErrUnsupported] and the package's notSupported error.
func Unsupported(t *testing.T, b evpoll.Backend, err, notSupported error) {
	t.Helper()
	if b != nil || !errors.Is(err, errors.ErrUnsupported) || !errors.Is(err, notSupported) {
		t.Fatalf("Open = %v, %v; want nil and %v", b, err, notSupported)
	}
}
