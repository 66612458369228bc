//go:build linux

package uring

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/evpoll"
	"golang.org/x/sys/unix"
)

func TestSockaddrRoundTrip(t *testing.T) {
	for _, s := range []string{"10.1.2.3:4567", "[2001:db8::5]:80", "[::ffff:1.2.3.4]:9"} {
		ap := netip.MustParseAddrPort(s)
		var sa unix.RawSockaddrAny
		n, err := putSockaddr(&sa, ap)
		require.NoError(t, err)
		got := getSockaddr(&sa)
		want := netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		if got != want {
			t.Errorf("%s: round trip %v (len %d)", s, got, n)
		}
	}
	var sa unix.RawSockaddrAny
	if _, err := putSockaddr(&sa, netip.AddrPort{}); err == nil {
		t.Error("zero AddrPort encoded")
	}
}

// TestNonblockingSocketsOnRing: the sockets the runtime makes are
// non-blocking, as epoll needs, and on every backend a Recv on one with
// nothing to read waits for the data instead of completing with EAGAIN:
// io_uring ignores O_NONBLOCK for its socket ops (it arms its internal
// poll), so one kind of socket serves both Linux backends.
func TestNonblockingSocketsOnRing(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, h *harness) {
		sfd, cfd := h.Pair(sockets, 1)
		for _, fd := range []int{sfd, cfd} {
			fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
			require.NoError(t, err)
			require.NotZero(t, fl&unix.O_NONBLOCK, "fd %d is non-blocking", fd)
		}
		buf := make([]byte, 8)
		h.Submit(&evpoll.Op{Kind: evpoll.Recv, Fd: sfd, Buf: buf}, 10)
		h.Poll(50 * time.Millisecond)
		_, done := h.Got[10]
		require.False(t, done, "a Recv with nothing to read completed: %+v", h.Got[10])
		h.Do(&evpoll.Op{Kind: evpoll.Send, Fd: cfd, Buf: []byte("late")}, 11)
		require.Equal(t, "late", string(buf[:h.OK(10)]))
		for i, fd := range []int{cfd, sfd} {
			h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: fd}, evpoll.Token(20+i))
		}
	})
}

// TestIPv6Echo: Listen, Connect and Accept over ::1 on every backend.
func TestIPv6Echo(t *testing.T) {
	probe, err := sockets.Listen("[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	unix.Close(probe)
	forEachBackend(t, nil, func(t *testing.T, h *harness) {
		lfd, err := sockets.Listen("[::1]:0")
		require.NoError(t, err)
		ap, _ := sockets.LocalAddr(lfd)
		cfd, err := sockets.Socket(ap)
		require.NoError(t, err)
		accept := &evpoll.Op{Kind: evpoll.Accept, Fd: lfd}
		h.Submit(accept, 1)
		h.Submit(&evpoll.Op{Kind: evpoll.Connect, Fd: cfd, Addr: ap}, 2)
		sfd := h.OK(1)
		h.OK(2)
		if !accept.Addr.Addr().Is6() || !accept.Addr.Addr().IsLoopback() {
			t.Errorf("peer %v", accept.Addr)
		}
		h.Submit(&evpoll.Op{Kind: evpoll.Send, Fd: cfd, Buf: []byte("v6")}, 3)
		buf := make([]byte, 4)
		if n := h.Do(&evpoll.Op{Kind: evpoll.Recv, Fd: sfd, Buf: buf}, 4); string(buf[:n]) != "v6" {
			t.Fatalf("recv %q", buf[:n])
		}
		h.OK(3)
		for i, fd := range []int{cfd, sfd, lfd} {
			h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: fd}, evpoll.Token(10+i))
		}
	})
}
