//go:build windows

package iocp

import (
	"io"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/evpoll/evpolltest"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/windows"
)

// twoPorts opens two Ports, as a scheduler with two workers does, and
// keeps a goroutine in home's Wait (a worker parked in its backend), so
// that home forwards the packets of away's ops on handles bound to home's
// completion port. home's own completions go to the returned channel.
func twoPorts(t *testing.T) (home, away *evpolltest.Harness, homeDone <-chan evpoll.Completion) {
	t.Helper()
	a, err := New(Options{PoolSize: 1})
	require.NoError(t, err)
	b, err := New(Options{PoolSize: 1})
	require.NoError(t, err)
	done := make(chan evpoll.Completion, 16)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]evpoll.Completion, 8)
		for {
			n, err := a.Wait(-1, buf)
			if err != nil {
				return // closed
			}
			for _, c := range buf[:n] {
				done <- c
			}
		}
	}()
	t.Cleanup(func() {
		require.NoError(t, b.Close())
		require.NoError(t, a.Close())
		wg.Wait()
	})
	return evpolltest.NewHarness(t, a), evpolltest.NewHarness(t, b), done
}

// homeOK waits for home's completion of tok and returns its result.
func homeOK(t *testing.T, done <-chan evpoll.Completion, tok evpoll.Token) int {
	t.Helper()
	select {
	case c := <-done:
		require.Equal(t, tok, c.Token)
		require.GreaterOrEqual(t, c.Res, int32(0), "token %d: %v", tok, c.Err())
		return int(c.Res)
	case <-time.After(5 * time.Second):
		t.Fatalf("token %d: no completion on the home port", tok)
		return 0
	}
}

// TestSocketOpsOnAnotherPort: a connection accepted on one Port (one
// worker) is read, written and closed through another, as when the
// scheduler moves the connection's task to another worker. The socket is
// bound to the first Port's completion port for good, so the second
// Port's ops complete there and are forwarded.
func TestSocketOpsOnAnotherPort(t *testing.T) {
	home, away, done := twoPorts(t)
	lfd, ap := evpolltest.Listen(t, sockets)
	defer windows.Closesocket(windows.Handle(uintptr(lfd)))
	home.Submit(&evpoll.Op{Kind: evpoll.Accept, Fd: lfd}, 1)
	c, err := net.Dial("tcp", ap.String())
	require.NoError(t, err)
	defer c.Close()
	fd := homeOK(t, done, 1)

	buf := make([]byte, 16)
	away.Submit(&evpoll.Op{Kind: evpoll.Recv, Fd: fd, Buf: buf}, 2)
	_, err = c.Write([]byte("ping"))
	require.NoError(t, err)
	n := away.OK(2)
	require.Equal(t, "ping", string(buf[:n]))

	require.Equal(t, 4, away.Do(&evpoll.Op{Kind: evpoll.Send, Fd: fd, Buf: []byte("pong")}, 3))
	got := make([]byte, 4)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = io.ReadFull(c, got)
	require.NoError(t, err)
	require.Equal(t, "pong", string(got))

	// The scheduler's order for a close on another worker: the home
	// forgets the handle, then the Close op runs on the away port.
	home.B.(*Port).Forget(fd)
	away.Do(&evpoll.Op{Kind: evpoll.Close, Fd: fd}, 4)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = c.Read(got)
	require.ErrorIs(t, err, io.EOF, "the peer after the close")
	handles.Lock()
	_, left := handles.m[windows.Handle(uintptr(fd))]
	handles.Unlock()
	require.False(t, left, "a closed handle is still in the table of shared handles")
}

// TestFilePositionAcrossPorts: the position of Offset -1 ops and the
// Append mode belong to the handle, so writes through two Ports continue
// one another, and an append through the other Port goes to the end.
func TestFilePositionAcrossPorts(t *testing.T) {
	home, away, done := twoPorts(t)
	path := filepath.Join(t.TempDir(), "f")
	home.Submit(&evpoll.Op{Kind: evpoll.Open, Path: path, OpenFlags: evpoll.ReadWrite | evpoll.Create | evpoll.Truncate, Mode: 0o644}, 1)
	fd := homeOK(t, done, 1)
	home.Submit(&evpoll.Op{Kind: evpoll.Write, Fd: fd, Buf: []byte("hello "), Offset: -1}, 2)
	require.Equal(t, 6, homeOK(t, done, 2))
	require.Equal(t, 5, away.Do(&evpoll.Op{Kind: evpoll.Write, Fd: fd, Buf: []byte("world"), Offset: -1}, 3))
	buf := make([]byte, 32)
	n := away.Do(&evpoll.Op{Kind: evpoll.Read, Fd: fd, Buf: buf, Offset: 0}, 4)
	require.Equal(t, "hello world", string(buf[:n]))
	home.B.(*Port).Forget(fd)
	away.Do(&evpoll.Op{Kind: evpoll.Close, Fd: fd}, 5)

	home.Submit(&evpoll.Op{Kind: evpoll.Open, Path: path, OpenFlags: evpoll.WriteOnly | evpoll.Append}, 6)
	afd := homeOK(t, done, 6)
	require.Equal(t, 1, away.Do(&evpoll.Op{Kind: evpoll.Write, Fd: afd, Buf: []byte("!"), Offset: -1}, 7))
	home.B.(*Port).Forget(afd)
	away.Do(&evpoll.Op{Kind: evpoll.Close, Fd: afd}, 8)

	rfd := away.Do(&evpoll.Op{Kind: evpoll.Open, Path: path}, 9)
	n = away.Do(&evpoll.Op{Kind: evpoll.Read, Fd: rfd, Buf: buf, Offset: -1}, 10)
	require.Equal(t, "hello world!", string(buf[:n]))
	away.Do(&evpoll.Op{Kind: evpoll.Close, Fd: rfd}, 11)
	requireClosed(t, path)
}

// requireClosed fails unless no handle of path is open: a handle still
// open (even one shared for reading, writing and deleting) makes an open
// that shares nothing fail with ERROR_SHARING_VIOLATION.
func requireClosed(t *testing.T, path string) {
	t.Helper()
	p, err := windows.UTF16PtrFromString(path)
	require.NoError(t, err)
	h, err := windows.CreateFile(p, windows.GENERIC_READ, 0, nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	require.NoError(t, err, "%s: a handle is still open", path)
	require.NoError(t, windows.CloseHandle(h))
}
