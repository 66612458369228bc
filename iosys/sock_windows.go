package iosys

import (
	"errors"
	"fmt"
	"net/netip"

	"golang.org/x/sys/windows"
)

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

// ListenWith is Listen; reusePort is refused: Windows has no
// SO_REUSEPORT (its SO_REUSEADDR lets another socket take the port over,
// which is not the same). The backend name is not needed: IOCP's own
// errors name it.
func ListenWith(_, addr string, reusePort bool) (int, error) {
	if reusePort {
		return -1, fmt.Errorf("iosys: listen %s: SO_REUSEPORT: %w on windows", addr, errors.ErrUnsupported)
	}
	return Listen(addr)
}

func fromSockaddr(sa windows.Sockaddr) (netip.AddrPort, error) {
	switch a := sa.(type) {
	case *windows.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port)), nil
	case *windows.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(a.Addr), uint16(a.Port)), nil
	}
	return netip.AddrPort{}, fmt.Errorf("iosys: address of family %T is not IPv4 or IPv6", sa)
}
