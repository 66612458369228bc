//go:build linux || darwin || freebsd

package unixsock

import (
	"fmt"
	"net/netip"

	"golang.org/x/sys/unix"
)

// Socket returns a non-blocking, close-on-exec TCP socket for connecting
// to ap (matching its family), with TCP_NODELAY ([NewSocket]). Errors
// start "socket: "; the caller prefixes its package.
func Socket(ap netip.AddrPort) (int, error) {
	fd, err := NewSocket(Family(ap))
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("socket: nodelay: %w", err)
	}
	return fd, nil
}

// Listen returns a non-blocking, close-on-exec TCP socket ([NewSocket])
// bound to ap and listening, with SO_REUSEADDR, and SO_REUSEPORT when
// reusePort is true. Errors start "listen: "; the caller prefixes its
// package.
func Listen(ap netip.AddrPort, reusePort bool) (int, error) {
	sa, err := ToSockaddr(ap)
	if err != nil {
		return -1, fmt.Errorf("listen: %w", err)
	}
	fd, err := NewSocket(Family(ap))
	if err != nil {
		return -1, fmt.Errorf("listen: socket: %w", err)
	}
	fail := func(op string, err error) (int, error) {
		unix.Close(fd)
		return -1, fmt.Errorf("listen: %s %v: %w", op, ap, err)
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

// LocalAddr returns the address a socket is bound to (getsockname). Its
// error starts "getsockname: ".
func LocalAddr(fd int) (netip.AddrPort, error) {
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("getsockname: %w", err)
	}
	return FromSockaddr(sa), nil
}
