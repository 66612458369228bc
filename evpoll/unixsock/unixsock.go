//go:build linux || darwin || freebsd

package unixsock

import (
	"fmt"
	"net/netip"

	"github.com/jadevm/jade/evpoll"
	"golang.org/x/sys/unix"
)

// OpenFlags maps portable open flags to O_* bits (always O_CLOEXEC).
func OpenFlags(f evpoll.OpenFlag) int {
	fl := unix.O_CLOEXEC
	switch {
	case f&evpoll.ReadWrite != 0:
		fl |= unix.O_RDWR
	case f&evpoll.WriteOnly != 0:
		fl |= unix.O_WRONLY
	default:
		fl |= unix.O_RDONLY
	}
	if f&evpoll.Create != 0 {
		fl |= unix.O_CREAT
	}
	if f&evpoll.Truncate != 0 {
		fl |= unix.O_TRUNC
	}
	if f&evpoll.Append != 0 {
		fl |= unix.O_APPEND
	}
	if f&evpoll.Exclusive != 0 {
		fl |= unix.O_EXCL
	}
	return fl
}

// Family is the address family of a socket for ap: AF_INET for IPv4 and
// IPv4-mapped IPv6 addresses, AF_INET6 otherwise.
func Family(ap netip.AddrPort) int {
	if ap.Addr().Unmap().Is4() {
		return unix.AF_INET
	}
	return unix.AF_INET6
}

// ToSockaddr converts ap to a unix.Sockaddr; IPv4-mapped IPv6 addresses
// become IPv4. An invalid address (the zero AddrPort) is an error.
func ToSockaddr(ap netip.AddrPort) (unix.Sockaddr, error) {
	addr := ap.Addr().Unmap()
	switch {
	case addr.Is4():
		return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: addr.As4()}, nil
	case addr.Is6():
		return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: addr.As16()}, nil
	}
	return nil, fmt.Errorf("invalid address %v", ap)
}

// FromSockaddr converts an AF_INET or AF_INET6 sockaddr; other families
// (and nil) give the zero AddrPort.
func FromSockaddr(sa unix.Sockaddr) netip.AddrPort {
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), uint16(sa.Port))
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr), uint16(sa.Port))
	}
	return netip.AddrPort{}
}
