//go:build linux

package uring

// The raw sockaddr encoding that the ring's CONNECT and ACCEPT and the
// epoll backend's connect(2) and accept4(2) hand to the kernel. Sockets
// themselves are made by package iosys (see its doc for who owns a
// descriptor).

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"unsafe"

	"golang.org/x/sys/unix"
)

// putSockaddr encodes ap into sa and returns the length to pass to the
// kernel. IPv4-mapped IPv6 addresses are encoded as IPv4.
func putSockaddr(sa *unix.RawSockaddrAny, ap netip.AddrPort) (uint32, error) {
	*sa = unix.RawSockaddrAny{}
	addr := ap.Addr().Unmap()
	switch {
	case addr.Is4():
		in := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		in.Family = unix.AF_INET
		binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&in.Port))[:], ap.Port())
		in.Addr = addr.As4()
		return unix.SizeofSockaddrInet4, nil
	case addr.Is6():
		in := (*unix.RawSockaddrInet6)(unsafe.Pointer(sa))
		in.Family = unix.AF_INET6
		binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&in.Port))[:], ap.Port())
		in.Addr = addr.As16()
		return unix.SizeofSockaddrInet6, nil
	}
	return 0, fmt.Errorf("uring: sockaddr: invalid address %v", ap)
}

// getSockaddr decodes an AF_INET or AF_INET6 sockaddr; other families give
// the zero AddrPort.
func getSockaddr(sa *unix.RawSockaddrAny) netip.AddrPort {
	switch sa.Addr.Family {
	case unix.AF_INET:
		in := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		port := binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&in.Port))[:])
		return netip.AddrPortFrom(netip.AddrFrom4(in.Addr), port)
	case unix.AF_INET6:
		in := (*unix.RawSockaddrInet6)(unsafe.Pointer(sa))
		port := binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&in.Port))[:])
		return netip.AddrPortFrom(netip.AddrFrom16(in.Addr), port)
	}
	return netip.AddrPort{}
}
