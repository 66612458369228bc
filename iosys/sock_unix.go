//go:build linux || darwin || freebsd

package iosys

import (
	"fmt"
	"net/netip"

	"github.com/jadevm/jade/evpoll/unixsock"
	"golang.org/x/sys/unix"
)

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
