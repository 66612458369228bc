//go:build windows

package iosys

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/jadevm/jade/evpoll"
	"github.com/jadevm/jade/iocp"
	"golang.org/x/sys/windows"
)

// Open opens the IOCP backend of one worker.
func Open(worker int) (evpoll.Backend, error) {
	b, err := iocp.Open(iocp.Options{})
	if err != nil {
		return nil, fmt.Errorf("iosys: open worker %d: %w", worker, err)
	}
	return b, nil
}

// Listen returns a listening TCP socket bound to addr.
func Listen(addr string) (int, error) { return iocp.Listen(addr) }

// Socket parses addr and returns a TCP socket to connect to it, with the
// parsed address. The backend name is not needed: the backend package's
// own errors name it.
func Socket(_, addr string) (int, netip.AddrPort, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return -1, ap, fmt.Errorf("iosys: socket: address %q: %w", addr, err)
	}
	fd, err := iocp.Socket(ap)
	return fd, ap, err
}

// AcceptNow reports ErrUnsupported: an IOCP listener takes connections
// only through AcceptEx, so net.accept always waits for a completion.
func AcceptNow(fd int) (int, error) {
	return -1, fmt.Errorf("iosys: accept now: an IOCP listener accepts only through AcceptEx: %w", errors.ErrUnsupported)
}

// SendNow reports ErrUnsupported: net.write on IOCP always waits for the
// completion of an overlapped send.
func SendNow(fd int, buf []byte) (int, error) {
	return 0, fmt.Errorf("iosys: send now: IOCP sends are overlapped: %w", errors.ErrUnsupported)
}

// Accepted sets TCP_NODELAY on an accepted connection.
func Accepted(fd int) error {
	return windows.SetsockoptInt(windows.Handle(fd), windows.IPPROTO_TCP, windows.TCP_NODELAY, 1)
}

// Close closes a socket no backend has seen yet.
func Close(fd int) { windows.Closesocket(windows.Handle(fd)) }

// CheckConfig checks the environment that Open reads; this backend reads
// none (JADE_POLLER selects between the Linux backends only).
func CheckConfig() error { return nil }
