//go:build linux || darwin || freebsd

package unixsock

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/evpoll"
	"golang.org/x/sys/unix"
)

func TestOpenFlags(t *testing.T) {
	cases := []struct {
		f    evpoll.OpenFlag
		want int
	}{
		{evpoll.ReadOnly, unix.O_RDONLY},
		{evpoll.WriteOnly | evpoll.Create | evpoll.Truncate, unix.O_WRONLY | unix.O_CREAT | unix.O_TRUNC},
		{evpoll.ReadWrite | evpoll.Append | evpoll.Exclusive, unix.O_RDWR | unix.O_APPEND | unix.O_EXCL},
	}
	for _, c := range cases {
		if got := OpenFlags(c.f); got != c.want|unix.O_CLOEXEC|unix.O_NONBLOCK {
			t.Errorf("OpenFlags(%#x) = %#x, want %#x", c.f, got, c.want|unix.O_CLOEXEC|unix.O_NONBLOCK)
		}
	}
}

func TestSockaddrRoundTrip(t *testing.T) {
	for _, s := range []string{"127.0.0.1:80", "[::1]:8080", "[::ffff:10.0.0.1]:9"} {
		ap := netip.MustParseAddrPort(s)
		sa, err := ToSockaddr(ap)
		require.NoError(t, err)
		want := netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		if got := FromSockaddr(sa); got != want {
			t.Errorf("%s: round trip gives %v, want %v", s, got, want)
		}
		if fam := Family(ap); (fam == unix.AF_INET) != want.Addr().Is4() {
			t.Errorf("%s: family %d", s, fam)
		}
	}
	if _, err := ToSockaddr(netip.AddrPort{}); err == nil {
		t.Error("zero address converted")
	}
	if got := FromSockaddr(&unix.SockaddrUnix{Name: "x"}); got.IsValid() {
		t.Errorf("unix sockaddr gives %v", got)
	}
}

func TestListenSocketLocalAddr(t *testing.T) {
	lfd, err := Listen(netip.MustParseAddrPort("127.0.0.1:0"), true)
	require.NoError(t, err)
	defer unix.Close(lfd)
	ap, err := LocalAddr(lfd)
	if err != nil || !ap.Addr().IsLoopback() || ap.Port() == 0 {
		t.Fatalf("LocalAddr = %v, %v", ap, err)
	}
	if _, err := Listen(ap, false); err == nil {
		t.Fatal("a second listener on a bound port without SO_REUSEPORT")
	}
	fd, err := Socket(ap)
	require.NoError(t, err)
	defer unix.Close(fd)
	sa, _ := ToSockaddr(ap)
	if err := unix.Connect(fd, sa); err != nil {
		require.ErrorIs(t, err, unix.EINPROGRESS, "connect of a non-blocking socket")
	}
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	require.NoError(t, err)
	require.NotZero(t, fl&unix.O_NONBLOCK, "Socket is non-blocking")
	fdfl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	require.NoError(t, err)
	require.NotZero(t, fdfl&unix.FD_CLOEXEC, "Socket is close-on-exec")
	if v, err := unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY); err != nil || v == 0 {
		t.Fatalf("TCP_NODELAY = %d, %v", v, err)
	}
	if _, err := LocalAddr(-1); err == nil {
		t.Fatal("LocalAddr(-1) succeeded")
	}
}
