//go:build darwin || freebsd

package iosys

import (
	"fmt"
	"net/netip"

	"github.com/jadevm/jade/evpoll"
	"github.com/jadevm/jade/kqueue"
	"golang.org/x/sys/unix"
)

// Open opens the kqueue backend of one worker.
func Open(worker int) (evpoll.Backend, error) {
	b, err := kqueue.Open(kqueue.Options{})
	if err != nil {
		return nil, fmt.Errorf("iosys: open worker %d: %w", worker, err)
	}
	return b, nil
}

// Listen returns a non-blocking listening TCP socket bound to addr.
func Listen(addr string) (int, error) { return kqueue.Listen(addr) }

// Socket parses addr and returns a non-blocking TCP socket to connect to
// it, with the parsed address. The backend name is not needed: the
// backend package's own errors name it.
func Socket(_, addr string) (int, netip.AddrPort, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return -1, ap, fmt.Errorf("iosys: socket: address %q: %w", addr, err)
	}
	fd, err := kqueue.Socket(ap)
	return fd, ap, err
}

// AcceptNow accepts a connection already waiting on listening socket fd,
// or fails at once (EAGAIN: none is waiting).
func AcceptNow(fd int) (int, error) { return kqueue.AcceptNow(fd) }

// SendNow sends what of buf connected socket fd takes now and returns how
// much that was (EAGAIN: nothing).
func SendNow(fd int, buf []byte) (int, error) { return kqueue.SendNow(fd, buf) }

// Accepted sets TCP_NODELAY on an accepted connection.
func Accepted(fd int) error { return unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1) }

// Close closes a descriptor no backend has seen yet.
func Close(fd int) { unix.Close(fd) }

// CheckConfig checks the environment that Open reads; this backend reads
// none (JADE_POLLER selects between the Linux backends only).
func CheckConfig() error { return nil }

// ListenWith is Listen with SO_REUSEPORT set when reusePort is true
// (kqueue's errors name it: the backend name is not needed).
func ListenWith(_, addr string, reusePort bool) (int, error) {
	return kqueue.ListenWith(addr, reusePort)
}
