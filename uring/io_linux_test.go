//go:build linux

package uring

import (
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/evpoll"
	"golang.org/x/sys/unix"
)

// listen returns a backend-ready listening socket on a free loopback port.
func listen(t *testing.T) (int, string) {
	t.Helper()
	fd, err := sockets.Listen("127.0.0.1:0")
	require.NoError(t, err)
	ap, err := sockets.LocalAddr(fd)
	require.NoError(t, err)
	return fd, ap.String()
}

// TestFileOps: open (create), write and read at offsets, read at the
// current position, close; and an open error as a completion.
func TestFileOps(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, h *harness) {
		path := filepath.Join(t.TempDir(), "data")
		fd := h.Do(&evpoll.Op{Kind: evpoll.Open, Path: path, OpenFlags: evpoll.ReadWrite | evpoll.Create | evpoll.Truncate, Mode: 0o600}, 1)
		if n := h.Do(&evpoll.Op{Kind: evpoll.Write, Fd: fd, Buf: []byte("hello world"), Offset: 0}, 2); n != 11 {
			t.Fatalf("write = %d", n)
		}
		if n := h.Do(&evpoll.Op{Kind: evpoll.Write, Fd: fd, Buf: []byte("W"), Offset: 6}, 3); n != 1 {
			t.Fatalf("write at 6 = %d", n)
		}
		buf := make([]byte, 5)
		if n := h.Do(&evpoll.Op{Kind: evpoll.Read, Fd: fd, Buf: buf, Offset: 6}, 4); string(buf[:n]) != "World" {
			t.Fatalf("read at 6 = %q", buf[:n])
		}
		// Offset -1 reads at the file position, which pwrite/pread left at 0.
		if n := h.Do(&evpoll.Op{Kind: evpoll.Read, Fd: fd, Buf: buf, Offset: -1}, 5); string(buf[:n]) != "hello" {
			t.Fatalf("read at position = %q", buf[:n])
		}
		if n := h.Do(&evpoll.Op{Kind: evpoll.Read, Fd: fd, Buf: buf, Offset: 100}, 6); n != 0 {
			t.Fatalf("read past EOF = %d", n)
		}
		h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: fd}, 7)
		h.Submit(&evpoll.Op{Kind: evpoll.Open, Path: filepath.Join(path, "nope")}, 8)
		if c := h.Wait(8); c.Err() != unix.ENOTDIR {
			t.Fatalf("open below a file: %v, want ENOTDIR", c.Err())
		}
		if _, err := h.B.Submit(&evpoll.Op{Kind: evpoll.Open, Path: "a\x00b"}, 9); err == nil {
			t.Fatal("open with NUL in path accepted")
		}
		if !h.c.ring && h.B.Stats().Pool < 6 {
			t.Errorf("epoll file ops did not run on the pool: %v", h.B.Stats())
		}
	})
}

// TestCancelPending cancels a pending accept and a pending recv: each
// completes exactly once, as -ECANCELED with FlagCancelled, and its slot
// is free afterwards (Pending 0, second Cancel is ErrNotPending).
func TestCancelPending(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, h *harness) {
		lfd, addr := listen(t)
		defer unix.Close(lfd)
		id := h.Submit(&evpoll.Op{Kind: evpoll.Accept, Fd: lfd}, 1)
		h.Poll(0)
		require.NoError(t, h.B.Cancel(id))
		// A second Cancel is nil, or ErrNotPending where the backend already
		// finished the op (epoll cancels synchronously).
		if err := h.B.Cancel(id); err != nil && !errors.Is(err, evpoll.ErrNotPending) {
			t.Fatalf("second cancel before the completion: %v", err)
		}
		if c := h.Wait(1); !c.Cancelled() || c.Err() != unix.ECANCELED {
			t.Fatalf("cancelled accept: %+v (%v)", c, c.Err())
		}
		if err := h.B.Cancel(id); !errors.Is(err, evpoll.ErrNotPending) {
			t.Fatalf("cancel after the completion: %v, want ErrNotPending", err)
		}

		// A recv on a connected socket that never gets data.
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn.Close()
		sfd := h.Do(&evpoll.Op{Kind: evpoll.Accept, Fd: lfd}, 2)
		buf := make([]byte, 8)
		id = h.Submit(&evpoll.Op{Kind: evpoll.Recv, Fd: sfd, Buf: buf}, 3)
		h.Poll(0)
		require.NoError(t, h.B.Cancel(id))
		if c := h.Wait(3); !c.Cancelled() {
			t.Fatalf("cancelled recv: %+v (%v)", c, c.Err())
		}
		h.Poll(10 * time.Millisecond)
		if p := h.B.Pending(); p != 0 {
			t.Fatalf("pending after cancels = %d", p)
		}
		// The socket still works after the cancelled recv.
		conn.Write([]byte("x"))
		if n := h.Do(&evpoll.Op{Kind: evpoll.Recv, Fd: sfd, Buf: buf}, 4); n != 1 {
			t.Fatalf("recv after cancel = %d", n)
		}
		h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: sfd}, 5)
		if st := h.B.Stats(); st.Cancelled != 2 {
			t.Errorf("cancel count = %d, want 2", st.Cancelled)
		}
	})
}

// TestCancelRace cancels recvs while data is arriving: every op completes
// exactly once, either with data or cancelled, and no data is duplicated.
func TestCancelRace(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, h *harness) {
		lfd, addr := listen(t)
		defer unix.Close(lfd)
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn.Close()
		sfd := h.Do(&evpoll.Op{Kind: evpoll.Accept, Fd: lfd}, 1)
		defer unix.Close(sfd)
		var got, cancelled int
		for i := 0; i < 200; i++ {
			tok := evpoll.Token(100 + i)
			id := h.Submit(&evpoll.Op{Kind: evpoll.Recv, Fd: sfd, Buf: make([]byte, 1)}, tok)
			if i%2 == 0 {
				conn.Write([]byte{byte(i)})
			}
			h.Poll(0)
			h.B.Cancel(id) // may find the op done: ErrNotPending is fine
			c := h.Wait(tok)
			switch {
			case c.Cancelled():
				cancelled++
			case c.Res == 1:
				got++
			default:
				t.Fatalf("recv %d: res %d flags %d", i, c.Res, c.Flags)
			}
		}
		if got > 100 || got+cancelled != 200 {
			t.Fatalf("got %d bytes, %d cancelled, of 200 ops (100 bytes sent)", got, cancelled)
		}
		if p := h.B.Pending(); p != 0 {
			t.Fatalf("pending = %d", p)
		}
	})
}

// TestCancelFromOtherThread: a Cancel from another goroutine (another OS
// thread) reaches an op while its owner is blocked in Wait. For owner
// rings this goes through the remote-cancel queue and a kick.
func TestCancelFromOtherThread(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, h *harness) {
		lfd, _ := listen(t)
		defer unix.Close(lfd)
		for i := 0; i < 3; i++ {
			tok := evpoll.Token(i + 1)
			id := h.Submit(&evpoll.Op{Kind: evpoll.Accept, Fd: lfd}, tok)
			h.Poll(0)
			errc := make(chan error, 1)
			go func() {
				time.Sleep(10 * time.Millisecond)
				errc <- h.B.Cancel(id)
			}()
			start := time.Now()
			c := h.Wait(tok)
			if !c.Cancelled() || time.Since(start) > 2*time.Second {
				t.Fatalf("remote cancel: %+v after %v", c, time.Since(start))
			}
			require.NoError(t, <-errc)
		}
		if p := h.B.Pending(); p != 0 {
			t.Fatalf("pending %d", p)
		}
	})
}

// TestSubmitFromOtherThread: an op submitted by another goroutine while
// the owner is blocked in Wait starts at once (owner rings kick the owner;
// shared rings and epoll start it in the submitter).
func TestSubmitFromOtherThread(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, h *harness) {
		for i := 0; i < 3; i++ {
			tok := evpoll.Token(i + 1)
			go func() {
				time.Sleep(10 * time.Millisecond)
				if _, err := h.B.Submit(&evpoll.Op{Kind: evpoll.Nop}, tok); err != nil {
					t.Error(err)
				}
			}()
			start := time.Now()
			h.Wait(tok)
			if el := time.Since(start); el > 2*time.Second {
				t.Fatalf("op from another thread completed after %v", el)
			}
		}
	})
}
