//go:build linux

package iosys

import (
	"fmt"
	"net/netip"

	"github.com/jadevm/jade/evpoll"
	"github.com/jadevm/jade/uring"
	"golang.org/x/sys/unix"
)

// Open opens the completion backend of one worker. It must be called on
// the worker's locked OS thread: an io_uring ring is opened with the
// owner-thread flags (SINGLE_ISSUER, DEFER_TASKRUN), the topology chosen by
// measurement in package uring.
func Open(worker int) (evpoll.Backend, error) {
	b, err := uring.Open(uring.Options{OwnerThread: true})
	if err != nil {
		return nil, fmt.Errorf("iosys: open worker %d: %w", worker, err)
	}
	return b, nil
}

// Listen returns a non-blocking listening TCP socket bound to addr
// ("host:port").
func Listen(addr string) (int, error) { return uring.Listen(addr) }

// sockets are the socket helpers whose errors name backend, the name of
// the calling worker's backend (its Name, "io_uring" or "epoll"; "iosys"
// when it has none).
func sockets(backend string) uring.Sockets {
	if backend == "" {
		backend = "iosys"
	}
	return uring.Sockets{Name: backend}
}

// Socket parses addr and returns a non-blocking TCP socket to connect to
// it, with the parsed address. Its errors start with backend, the name of
// the backend that will drive the socket.
func Socket(backend, addr string) (int, netip.AddrPort, error) {
	k := sockets(backend)
	ap, err := k.ParseAddr(addr)
	if err != nil {
		return -1, ap, err
	}
	fd, err := k.Socket(ap)
	return fd, ap, err
}

// AcceptNow accepts a connection already waiting on listening socket fd,
// or fails at once (EAGAIN: none is waiting).
func AcceptNow(fd int) (int, error) { return uring.AcceptNow(fd) }

// SendNow sends what of buf connected socket fd takes now and returns how
// much that was (EAGAIN: nothing).
func SendNow(fd int, buf []byte) (int, error) { return uring.SendNow(fd, buf) }

// Accepted prepares an accepted connection (TCP_NODELAY: replies are small
// and latency matters more than coalescing).
func Accepted(fd int) error { return uring.SetNoDelay(fd) }

// Close closes a descriptor no backend has seen yet (a socket whose
// connect could not be submitted).
func Close(fd int) { unix.Close(fd) }

// CheckConfig checks the environment that Open reads (JADE_POLLER) without
// opening a backend, so that a bad setting fails the runtime's creation
// instead of leaving every worker without I/O.
func CheckConfig() error { return uring.CheckPoller(uring.Options{}) }

// ListenWith is Listen with SO_REUSEPORT set when reusePort is true. Its
// errors start with backend, the name of the backend that will drive the
// socket.
func ListenWith(backend, addr string, reusePort bool) (int, error) {
	return sockets(backend).ListenWith(addr, reusePort)
}
