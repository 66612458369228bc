//go:build linux || darwin || freebsd

package evpolltest

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jadevm/jade/internal/evpoll"
)

// Fifo drives a FIFO through the backend, the way file.open and
// file.read reach one:
//
//   - an Open never waits for the other end: write-only with no reader
//     fails at once with ENXIO, and eight read-only opens with no writer
//     (more than a blocking pool's goroutines) succeed at once, after
//     which an Open of a regular file still completes;
//   - a Read with no data neither blocks Submit (the worker) nor
//     completes, and Cancel ends it at once with -ECANCELED and
//     FlagCancelled;
//   - bytes written through the backend reach a later Read, and a Read
//     after the writer's Close is EOF.
//
// It returns the backend's stats for backend-specific checks. A backend
// that blocks fails the test instead of hanging it: a cleanup opens and
// closes the other end of the FIFO, which frees an open or a read stuck
// in the kernel, before the backend is closed.
func Fifo(t *testing.T, open Opener) evpoll.Stats {
	h := Open(t, open)
	dir := t.TempDir()
	path := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	t.Cleanup(func() { unblockFifo(path) })

	h.Submit(&evpoll.Op{Kind: evpoll.Open, Path: path, OpenFlags: evpoll.WriteOnly}, 1)
	if c := h.Wait(1); !errors.Is(c.Err(), syscall.ENXIO) {
		t.Fatalf("write-only open of a FIFO without a reader: %+v (%v), want ENXIO at once", c, c.Err())
	}
	const readers = 8
	var rfd [readers]int
	for i := range rfd {
		h.Submit(&evpoll.Op{Kind: evpoll.Open, Path: path, OpenFlags: evpoll.ReadOnly}, evpoll.Token(10+i))
	}
	file := filepath.Join(dir, "file")
	h.Submit(&evpoll.Op{Kind: evpoll.Open, Path: file, OpenFlags: evpoll.ReadWrite | evpoll.Create, Mode: 0o600}, 20)
	for i := range rfd {
		rfd[i] = h.OK(evpoll.Token(10 + i))
	}
	h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: h.OK(20)}, 21)
	wfd := h.Do(&evpoll.Op{Kind: evpoll.Open, Path: path, OpenFlags: evpoll.WriteOnly}, 22)

	// A read with nothing to read: Submit must return (a blocking read(2)
	// inside it would stall the caller's thread until data came).
	buf := make([]byte, 16)
	rd := &evpoll.Op{Kind: evpoll.Read, Fd: rfd[0], Buf: buf, Offset: -1}
	sub := make(chan evpoll.OpID, 1)
	go func() {
		id, err := h.B.Submit(rd, 30)
		if err != nil {
			t.Errorf("submit read: %v", err)
		}
		sub <- id
	}()
	var id evpoll.OpID
	select {
	case id = <-sub:
	case <-time.After(2 * time.Second):
		_, _ = syscall.Write(wfd, []byte("!")) // let the stuck read return
		<-sub
		t.Fatal("Submit of a FIFO read with no data blocked for 2 s")
	}
	if h.Poll(20*time.Millisecond) != 0 {
		t.Fatalf("a FIFO read with no data completed: %+v", h.Got[30])
	}
	if err := h.B.Cancel(id); err != nil {
		t.Fatalf("cancel of the FIFO read: %v", err)
	}
	if c := h.Wait(30); !c.Cancelled() || !errors.Is(c.Err(), syscall.ECANCELED) {
		t.Fatalf("cancelled FIFO read: %+v (%v)", c, c.Err())
	}

	if n := h.Do(&evpoll.Op{Kind: evpoll.Write, Fd: wfd, Buf: []byte("ping"), Offset: -1}, 31); n != 4 {
		t.Fatalf("FIFO write = %d", n)
	}
	if n := h.Do(&evpoll.Op{Kind: evpoll.Read, Fd: rfd[0], Buf: buf, Offset: -1}, 32); string(buf[:n]) != "ping" {
		t.Fatalf("FIFO read = %q, want ping", buf[:n])
	}
	h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: wfd}, 33)
	if n := h.Do(&evpoll.Op{Kind: evpoll.Read, Fd: rfd[0], Buf: buf, Offset: -1}, 34); n != 0 {
		t.Fatalf("FIFO read after the writer closed = %d, want EOF", n)
	}
	for i, fd := range rfd {
		h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: fd}, evpoll.Token(40+i))
	}
	return h.B.Stats()
}

// unblockFifo opens the FIFO at path read-write and closes it again: an
// open waiting for a reader or a writer returns, and a read waiting for
// a writer sees EOF once no writer is left.
func unblockFifo(path string) {
	if fd, err := syscall.Open(path, syscall.O_RDWR|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0); err == nil {
		_ = syscall.Close(fd)
	}
}
