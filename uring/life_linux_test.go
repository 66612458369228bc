//go:build linux

package uring

import (
	"errors"
	"net"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/evpoll"
	"golang.org/x/sys/unix"
)

// TestBackendKeepsOpAlive: the caller drops every reference to a pending
// recv's Op and buffer; the backend's slot table must keep them alive
// across GCs until the final completion, and release them afterwards.
func TestBackendKeepsOpAlive(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, h *harness) {
		lfd, addr := listen(t)
		defer unix.Close(lfd)
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn.Close()
		sfd := h.Do(&evpoll.Op{Kind: evpoll.Accept, Fd: lfd}, 1)
		defer unix.Close(sfd)

		wop, wbuf := submitDropped(h, sfd, 2)
		h.Poll(0)
		for i := 0; i < 3; i++ {
			runtime.GC()
		}
		if wop.Value() == nil || wbuf.Value() == nil {
			t.Fatal("a pending op or its buffer was collected")
		}
		conn.Write([]byte("gc"))
		if c := h.Wait(2); c.Res != 2 {
			t.Fatalf("recv: %+v", c)
		}
		if got := string(wbuf.Value()[:2]); got != "gc" {
			t.Fatalf("buffer holds %q", got)
		}
		deadline := time.Now().Add(2 * time.Second)
		for wop.Value() != nil && time.Now().Before(deadline) {
			runtime.GC()
			time.Sleep(time.Millisecond)
		}
		if wop.Value() != nil {
			t.Fatal("the backend still references a completed op")
		}
	})
}

//go:noinline
func submitDropped(h *harness, fd int, tok evpoll.Token) (weak.Pointer[evpoll.Op], weak.Pointer[[16]byte]) {
	buf := new([16]byte)
	op := &evpoll.Op{Kind: evpoll.Recv, Fd: fd, Buf: buf[:]}
	h.Submit(op, tok)
	return weak.Make(op), weak.Make(buf)
}

// TestCloseWithPending: Close cancels pending ops, lets the kernel give
// their memory back, and later calls fail with ErrClosed.
func TestCloseWithPending(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, h *harness) {
		lfd, _ := listen(t)
		defer unix.Close(lfd)
		for i := 0; i < 4; i++ {
			h.Submit(&evpoll.Op{Kind: evpoll.Accept, Fd: lfd}, evpoll.Token(i+1))
		}
		h.Poll(0)
		start := time.Now()
		require.NoError(t, h.B.Close())
		if el := time.Since(start); el > time.Second {
			t.Fatalf("Close took %v", el)
		}
		var out [4]evpoll.Completion
		if _, err := h.B.Wait(0, out[:]); !errors.Is(err, evpoll.ErrClosed) {
			t.Fatalf("Wait after Close: %v", err)
		}
		if _, err := h.B.Submit(&evpoll.Op{Kind: evpoll.Nop}, 9); !errors.Is(err, evpoll.ErrClosed) {
			t.Fatalf("Submit after Close: %v", err)
		}
		if err := h.B.Wake(); !errors.Is(err, evpoll.ErrClosed) {
			t.Fatalf("Wake after Close: %v", err)
		}
		if h.B.Pending() != 0 {
			t.Fatalf("pending after Close: %d", h.B.Pending())
		}
	})
}
