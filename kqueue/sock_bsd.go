//go:build darwin || freebsd

package kqueue

// Socket helpers that do not use package net. Every socket they create is
// close-on-exec and non-blocking, as the backend needs.

import (
	"fmt"
	"net/netip"

	"github.com/jadevm/jade/evpoll/unixsock"
	"golang.org/x/sys/unix"
)

// Socket returns a new TCP socket for connecting to ap (matching its
// family), non-blocking, close-on-exec, with TCP_NODELAY.
func Socket(ap netip.AddrPort) (int, error) {
	fd, err := socket(unixsock.Family(ap))
	if err != nil {
		return -1, fmt.Errorf("kqueue: socket: %w", err)
	}
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("kqueue: socket: nodelay: %w", err)
	}
	return fd, nil
}

// Listen returns a listening TCP socket bound to addr ("ip:port"; port 0
// picks a free port, see LocalAddr). It sets SO_REUSEADDR and is
// non-blocking and close-on-exec.
func Listen(addr string) (int, error) { return ListenWith(addr, false) }

// ListenWith is Listen with SO_REUSEPORT set when reusePort is true.
func ListenWith(addr string, reusePort bool) (int, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return -1, fmt.Errorf("kqueue: listen: %w", err)
	}
	sa, err := unixsock.ToSockaddr(ap)
	if err != nil {
		return -1, fmt.Errorf("kqueue: listen: %w", err)
	}
	fd, err := socket(unixsock.Family(ap))
	if err != nil {
		return -1, fmt.Errorf("kqueue: listen: socket: %w", err)
	}
	fail := func(op string, err error) (int, error) {
		unix.Close(fd)
		return -1, fmt.Errorf("kqueue: listen: %s %v: %w", op, ap, err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		return fail("reuseaddr", err)
	}
	if reusePort {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
			return fail("reuseport", err)
		}
	}
	if err := unix.Bind(fd, sa); err != nil {
		return fail("bind", err)
	}
	if err := unix.Listen(fd, unix.SOMAXCONN); err != nil {
		return fail("listen", err)
	}
	return fd, nil
}

// LocalAddr returns the address a socket is bound to (getsockname).
func LocalAddr(fd int) (netip.AddrPort, error) {
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("kqueue: getsockname: %w", err)
	}
	return unixsock.FromSockaddr(sa), nil
}
