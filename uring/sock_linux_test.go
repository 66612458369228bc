//go:build linux

package uring

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/evpoll"
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
		if err != nil || got.String() != want {
			t.Errorf("ParseAddr(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "example.com:80", "1.2.3.4", "1.2.3.4:99999"} {
		if _, err := ParseAddr(bad); err == nil {
			t.Errorf("ParseAddr(%q) accepted", bad)
		}
	}
}

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

// TestIPv6Echo: Listen, Connect and Accept over ::1 on every backend.
func TestIPv6Echo(t *testing.T) {
	probe, err := Listen("[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	unix.Close(probe)
	forEachBackend(t, nil, func(t *testing.T, h *harness) {
		lfd, err := Listen("[::1]:0")
		require.NoError(t, err)
		ap, _ := LocalAddr(lfd)
		cfd, err := Socket(ap)
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
