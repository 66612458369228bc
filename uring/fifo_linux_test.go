//go:build linux

package uring

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/evpoll"
	"golang.org/x/sys/unix"
)

// TestTerminalRead: a terminal opened through the backend (a pty's
// slave, as file.open of /dev/tty would give) is read like a FIFO: a read
// with no input neither blocks Submit nor completes, Cancel ends it at
// once, and input typed later reaches the next read. On epoll the
// descriptor is polled, not handed to the pool.
func TestTerminalRead(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, h *harness) {
		ptm, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Skipf("no pseudo-terminals here: %v", err)
		}
		defer unix.Close(ptm)
		require.NoError(t, unix.IoctlSetPointerInt(ptm, unix.TIOCSPTLCK, 0))
		n, err := unix.IoctlGetInt(ptm, unix.TIOCGPTN)
		require.NoError(t, err)
		fd := h.Do(&evpoll.Op{Kind: evpoll.Open, Path: fmt.Sprintf("/dev/pts/%d", n), OpenFlags: evpoll.ReadWrite}, 1)
		buf := make([]byte, 16)
		sub := make(chan evpoll.OpID, 1)
		go func() {
			id, err := h.B.Submit(&evpoll.Op{Kind: evpoll.Read, Fd: fd, Buf: buf, Offset: -1}, 2)
			if err != nil {
				t.Errorf("submit: %v", err)
			}
			sub <- id
		}()
		var id evpoll.OpID
		select {
		case id = <-sub:
		case <-time.After(2 * time.Second):
			unix.Write(ptm, []byte("!\n")) // let the stuck read return
			<-sub
			t.Fatal("Submit of a terminal read with no input blocked for 2 s")
		}
		require.Zero(t, h.Poll(20*time.Millisecond), "a terminal read with no input completed: %+v", h.Got[2])
		require.NoError(t, h.B.Cancel(id))
		if c := h.Wait(2); !c.Cancelled() || !errors.Is(c.Err(), unix.ECANCELED) {
			t.Fatalf("cancelled terminal read: %+v (%v)", c, c.Err())
		}
		h.Submit(&evpoll.Op{Kind: evpoll.Read, Fd: fd, Buf: buf, Offset: -1}, 3)
		_, err = unix.Write(ptm, []byte("hi\n"))
		require.NoError(t, err)
		if n := h.OK(3); string(buf[:n]) != "hi\n" {
			t.Fatalf("terminal read = %q", buf[:n])
		}
		h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: fd}, 4)
		if st := h.B.Stats(); !h.c.ring && st.Pool != 1 {
			t.Errorf("Stats.Pool = %d, want only the open: %v", st.Pool, st)
		}
	})
}

// TestFifoOpenViaProc: an open of a FIFO by a /proc/self/fd path, which
// io_uring cannot resolve inline and hands to an io-wq worker, does not
// wait for the other end either: write-only with no reader is ENXIO at
// once, read-only succeeds. The descriptor is blocking on io_uring (the
// ring's reads want that) and non-blocking on epoll (polled).
func TestFifoOpenViaProc(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, h *harness) {
		path := filepath.Join(t.TempDir(), "fifo")
		require.NoError(t, unix.Mkfifo(path, 0o600))
		t.Cleanup(func() { // frees an open stuck in the kernel
			if fd, err := unix.Open(path, unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err == nil {
				unix.Close(fd)
			}
		})
		opath, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		require.NoError(t, err)
		defer unix.Close(opath)
		proc := fmt.Sprintf("/proc/self/fd/%d", opath)
		h.Submit(&evpoll.Op{Kind: evpoll.Open, Path: proc, OpenFlags: evpoll.WriteOnly}, 1)
		if c := h.Wait(1); !errors.Is(c.Err(), unix.ENXIO) {
			t.Fatalf("write-only open without a reader: %+v (%v), want ENXIO", c, c.Err())
		}
		fd := h.Do(&evpoll.Op{Kind: evpoll.Open, Path: proc, OpenFlags: evpoll.ReadOnly}, 2)
		fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		require.NoError(t, err)
		require.Equal(t, !h.c.ring, fl&unix.O_NONBLOCK != 0, "O_NONBLOCK on the opened FIFO (flags %#o)", fl)
		h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: fd}, 3)
	})
}
