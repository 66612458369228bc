//go:build linux || darwin || freebsd

package iosys

import (
	"fmt"
	"net/netip"

	"github.com/jadevm/jade/internal/evpoll/unixsock"
	"golang.org/x/sys/unix"
)

// newSocket returns a non-blocking, close-on-exec TCP socket of ap's
// family with TCP_NODELAY; errors start "socket: ".
func newSocket(ap netip.AddrPort) (int, error) { return unixsock.Socket(ap) }

// listen returns a non-blocking, close-on-exec listening socket bound to
// ap with SO_REUSEADDR; errors start "listen: ".
func listen(ap netip.AddrPort, reusePort bool) (int, error) { return unixsock.Listen(ap, reusePort) }

// Accepted prepares an accepted connection (TCP_NODELAY: replies are small
// and latency matters more than coalescing; accepted sockets do not
// inherit it from the listener).
func Accepted(fd int) error {
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
		return fmt.Errorf("iosys: nodelay: %w", err)
	}
	return nil
}

// Close closes a descriptor no backend has seen yet (a socket whose
// connect could not be submitted).
func Close(fd int) { unix.Close(fd) }

// Shutdown shuts down part of a full-duplex connection: how is ShutRead,
// ShutWrite or ShutBoth. ShutWrite sends FIN after the data already
// written, so a peer reads the whole reply before the end of stream,
// where a close with unread input would make the kernel send RST.
func Shutdown(fd, how int) error {
	h := [...]int{ShutRead: unix.SHUT_RD, ShutWrite: unix.SHUT_WR, ShutBoth: unix.SHUT_RDWR}
	if how < 0 || how >= len(h) {
		return fmt.Errorf("iosys: shutdown: how %d: want 0 read, 1 write or 2 both", how)
	}
	if err := unix.Shutdown(fd, h[how]); err != nil {
		return fmt.Errorf("iosys: shutdown: %w", err)
	}
	return nil
}

// LocalAddr returns the address socket fd is bound to.
func LocalAddr(fd int) (netip.AddrPort, error) {
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("iosys: getsockname: %w", err)
	}
	return fromSockaddr(sa)
}

// PeerAddr returns the address of a connected socket's peer.
func PeerAddr(fd int) (netip.AddrPort, error) {
	sa, err := unix.Getpeername(fd)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("iosys: getpeername: %w", err)
	}
	return fromSockaddr(sa)
}

// fromSockaddr converts an IPv4 or IPv6 sockaddr; other families are an
// error.
func fromSockaddr(sa unix.Sockaddr) (netip.AddrPort, error) {
	if ap := unixsock.FromSockaddr(sa); ap.IsValid() {
		return ap, nil
	}
	return netip.AddrPort{}, fmt.Errorf("iosys: address of family %T is not IPv4 or IPv6", sa)
}
