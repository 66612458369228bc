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
	fd, err := unixsock.Socket(ap, socket)
	if err != nil {
		return -1, fmt.Errorf("kqueue: %w", err)
	}
	return fd, nil
}

// Listen returns a listening TCP socket bound to addr ("ip:port"; port 0
// picks a free port, see LocalAddr). It sets SO_REUSEADDR and is
// non-blocking and close-on-exec.
func Listen(addr string) (int, error) { return ListenWith(addr, false) }

// SendNow sends what of buf the connected non-blocking socket fd takes
// without waiting and returns how much that was: unix.EAGAIN when it
// takes nothing. A closed peer is EPIPE, never SIGPIPE (sendFlags,
// SO_NOSIGPIPE).
func SendNow(fd int, buf []byte) (int, error) {
	n, err := unix.SendmsgN(fd, buf, nil, nil, sendFlags)
	if err != nil {
		return 0, fmt.Errorf("kqueue: send: %w", err)
	}
	return n, nil
}

// AcceptNow accepts a connection waiting on the non-blocking listening
// socket fd, as a non-blocking, close-on-exec socket, without waiting:
// unix.EAGAIN when none is waiting.
func AcceptNow(fd int) (int, error) {
	nfd, _, err := accept(fd)
	if err != nil {
		return -1, fmt.Errorf("kqueue: accept: %w", err)
	}
	return nfd, nil
}

// ListenWith is Listen with SO_REUSEPORT set when reusePort is true.
func ListenWith(addr string, reusePort bool) (int, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return -1, fmt.Errorf("kqueue: listen: %w", err)
	}
	fd, err := unixsock.Listen(ap, reusePort, socket)
	if err != nil {
		return -1, fmt.Errorf("kqueue: %w", err)
	}
	return fd, nil
}

// LocalAddr returns the address a socket is bound to (getsockname).
func LocalAddr(fd int) (netip.AddrPort, error) {
	ap, err := unixsock.LocalAddr(fd)
	if err != nil {
		return ap, fmt.Errorf("kqueue: %w", err)
	}
	return ap, nil
}
