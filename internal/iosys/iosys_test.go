//go:build linux || darwin || freebsd

package iosys

import (
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestParseAddr(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:80":   "127.0.0.1:80",
		":8080":          "0.0.0.0:8080",
		"localhost:9":    "127.0.0.1:9",
		"[::1]:443":      "[::1]:443",
		"[fe80::1]:1234": "[fe80::1]:1234",
	} {
		got, err := ParseAddr(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got.String(), in)
	}
	for _, bad := range []string{"", "example.com:80", "1.2.3.4", "1.2.3.4:99999"} {
		_, err := ParseAddr(bad)
		require.Error(t, err, bad)
	}
}

// TestSocketErrorsNameBackend: a socket error starts with the name of the
// backend that would drive the socket, once, or "iosys" without one.
func TestSocketErrorsNameBackend(t *testing.T) {
	_, _, err := Socket("epoll", "example.com:80")
	require.ErrorContains(t, err, "epoll: parse address: ")
	_, err = ListenWith("io_uring", "nohost", false)
	require.ErrorContains(t, err, "io_uring: parse address: ")
	_, err = Listen("nohost")
	require.True(t, strings.HasPrefix(err.Error(), "iosys: parse address: "), err.Error())
	lfd, err := Listen("127.0.0.1:0")
	require.NoError(t, err)
	defer Close(lfd)
	ap, err := LocalAddr(lfd)
	require.NoError(t, err)
	_, err = ListenWith("epoll", ap.String(), false)
	require.ErrorIs(t, err, unix.EADDRINUSE)
	require.Equal(t, 1, strings.Count(err.Error(), "epoll:"), err.Error())
	require.True(t, strings.HasPrefix(err.Error(), "epoll: listen: bind "), err.Error())
}

// TestAcceptNowSendNow: the calls that take a waiting connection and send
// what fits without a backend, on sockets Listen made.
func TestAcceptNowSendNow(t *testing.T) {
	lfd, err := Listen("localhost:0")
	require.NoError(t, err)
	defer Close(lfd)
	_, err = AcceptNow(lfd)
	require.ErrorIs(t, err, unix.EAGAIN, "nothing is waiting")
	ap, err := LocalAddr(lfd)
	require.NoError(t, err)
	c, err := net.Dial("tcp", ap.String())
	require.NoError(t, err)
	defer c.Close()
	var sfd int
	require.Eventually(t, func() bool {
		sfd, err = AcceptNow(lfd)
		return err == nil
	}, 2*time.Second, time.Millisecond)
	defer Close(sfd)
	require.NoError(t, Accepted(sfd))
	v, err := unix.GetsockoptInt(sfd, unix.IPPROTO_TCP, unix.TCP_NODELAY)
	require.NoError(t, err)
	require.NotZero(t, v)
	peer, err := PeerAddr(sfd)
	require.NoError(t, err)
	require.Equal(t, c.LocalAddr().String(), peer.String())
	n, err := SendNow(sfd, []byte("hi"))
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.NoError(t, Shutdown(sfd, ShutWrite))
	require.Error(t, Shutdown(sfd, 7))
	got, err := io.ReadAll(c)
	require.NoError(t, err)
	require.Equal(t, "hi", string(got))
	if _, err := SendNow(-1, nil); !errors.Is(err, unix.EBADF) {
		t.Fatalf("SendNow(-1) = %v, want EBADF", err)
	}
}

// TestRecvNowAllocatesNothing: RecvNow reads what a socket holds, 0 at
// the peer's end, EAGAIN when nothing is there, and allocates nothing
// for a read that finds bytes (a connection task reads once per
// request: unix.Recvfrom allocated the source address it returns).
func TestRecvNowAllocatesNothing(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	require.NoError(t, err)
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	buf := make([]byte, 16)
	_, err = RecvNow(fds[0], buf)
	require.ErrorIs(t, err, unix.EAGAIN, "nothing is there")
	msg := []byte("ping")
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := unix.Write(fds[1], msg); err != nil {
			t.Fatal(err)
		}
		n, err := RecvNow(fds[0], buf)
		if err != nil || n != len(msg) || string(buf[:n]) != "ping" {
			t.Fatalf("RecvNow = %d, %v (%q)", n, err, buf[:n])
		}
	})
	require.Zero(t, allocs, "allocations per read")
	require.NoError(t, unix.Shutdown(fds[1], unix.SHUT_WR))
	n, err := RecvNow(fds[0], buf)
	require.NoError(t, err)
	require.Zero(t, n, "the peer's end of stream")
}
