//go:build windows

package iosys

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/jadevm/jade/internal/evpoll/winsock"
	"golang.org/x/sys/windows"
)

// newSocket returns an overlapped, non-inheritable TCP socket of ap's
// family with TCP_NODELAY; errors start "socket: ".
func newSocket(ap netip.AddrPort) (int, error) { return winsock.Socket(ap) }

// listen returns an overlapped listening socket bound to ap; reusePort is
// refused: Windows has no SO_REUSEPORT (its SO_REUSEADDR lets another
// socket take the port over, which is not the same). Errors start
// "listen: ".
func listen(ap netip.AddrPort, reusePort bool) (int, error) {
	if reusePort {
		return -1, fmt.Errorf("listen %s: SO_REUSEPORT: %w on windows", ap, errors.ErrUnsupported)
	}
	return winsock.Listen(ap)
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
	if err := windows.SetsockoptInt(windows.Handle(fd), windows.IPPROTO_TCP, windows.TCP_NODELAY, 1); err != nil {
		return fmt.Errorf("iosys: nodelay: %w", err)
	}
	return nil
}

// Close closes a socket no backend has seen yet.
func Close(fd int) { windows.Closesocket(windows.Handle(fd)) }

// Shutdown shuts down part of a full-duplex connection: how is ShutRead,
// ShutWrite or ShutBoth (see the Unix version).
func Shutdown(fd, how int) error {
	h := [...]int{ShutRead: windows.SHUT_RD, ShutWrite: windows.SHUT_WR, ShutBoth: windows.SHUT_RDWR}
	if how < 0 || how >= len(h) {
		return fmt.Errorf("iosys: shutdown: how %d: want 0 read, 1 write or 2 both", how)
	}
	if err := windows.Shutdown(windows.Handle(fd), h[how]); err != nil {
		return fmt.Errorf("iosys: shutdown: %w", err)
	}
	return nil
}

// LocalAddr returns the address socket fd is bound to.
func LocalAddr(fd int) (netip.AddrPort, error) {
	sa, err := windows.Getsockname(windows.Handle(fd))
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("iosys: getsockname: %w", err)
	}
	return fromSockaddr(sa)
}

// PeerAddr returns the address of a connected socket's peer.
func PeerAddr(fd int) (netip.AddrPort, error) {
	sa, err := windows.Getpeername(windows.Handle(fd))
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("iosys: getpeername: %w", err)
	}
	return fromSockaddr(sa)
}

// fromSockaddr converts an IPv4 or IPv6 sockaddr; other families are an
// error.
func fromSockaddr(sa windows.Sockaddr) (netip.AddrPort, error) {
	if ap := winsock.FromSockaddr(sa); ap.IsValid() {
		return ap, nil
	}
	return netip.AddrPort{}, fmt.Errorf("iosys: address of family %T is not IPv4 or IPv6", sa)
}
