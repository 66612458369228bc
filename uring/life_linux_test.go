//go:build linux

package uring

import (
	"errors"
	"net"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/jadevm/jade/evpoll"
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
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		sfd := h.do(&evpoll.Op{Kind: evpoll.Accept, Fd: lfd}, 1)
		defer unix.Close(sfd)

		wop, wbuf := submitDropped(h, sfd, 2)
		h.poll(0)
		for i := 0; i < 3; i++ {
			runtime.GC()
		}
		if wop.Value() == nil || wbuf.Value() == nil {
			t.Fatal("a pending op or its buffer was collected")
		}
		conn.Write([]byte("gc"))
		if c := h.wait(2); c.Res != 2 {
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
	h.submit(op, tok)
	return weak.Make(op), weak.Make(buf)
}

// TestCloseWithPending: Close cancels pending ops, lets the kernel give
// their memory back, and later calls fail with ErrClosed.
func TestCloseWithPending(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, h *harness) {
		lfd, _ := listen(t)
		defer unix.Close(lfd)
		for i := 0; i < 4; i++ {
			h.submit(&evpoll.Op{Kind: evpoll.Accept, Fd: lfd}, evpoll.Token(i+1))
		}
		h.poll(0)
		start := time.Now()
		if err := h.b.Close(); err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); el > time.Second {
			t.Fatalf("Close took %v", el)
		}
		var out [4]evpoll.Completion
		if _, err := h.b.Wait(0, out[:]); !errors.Is(err, evpoll.ErrClosed) {
			t.Fatalf("Wait after Close: %v", err)
		}
		if _, err := h.b.Submit(&evpoll.Op{Kind: evpoll.Nop}, 9); !errors.Is(err, evpoll.ErrClosed) {
			t.Fatalf("Submit after Close: %v", err)
		}
		if err := h.b.Wake(); !errors.Is(err, evpoll.ErrClosed) {
			t.Fatalf("Wake after Close: %v", err)
		}
		if h.b.Pending() != 0 {
			t.Fatalf("pending after Close: %d", h.b.Pending())
		}
	})
}

// TestCloseUnblocksWaiter (shared rings and epoll): a goroutine blocked in
// Wait(-1) returns ErrClosed when another goroutine closes the backend.
func TestCloseUnblocksWaiter(t *testing.T) {
	for _, c := range backendCases {
		if c.opts.OwnerThread {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			b := openCase(t, c, nil)
			errc := make(chan error, 1)
			go func() {
				var out [4]evpoll.Completion
				for {
					if _, err := b.Wait(-1, out[:]); err != nil {
						errc <- err
						return
					}
				}
			}()
			time.Sleep(20 * time.Millisecond)
			b.Close()
			select {
			case err := <-errc:
				if !errors.Is(err, evpoll.ErrClosed) {
					t.Fatalf("waiter: %v", err)
				}
			case <-time.After(3 * time.Second):
				t.Fatal("waiter still blocked after Close")
			}
		})
	}
}
