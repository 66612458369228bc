//go:build windows

package iocp

// Socket helpers that do not use package net. Every socket they create is
// overlapped (WSA_FLAG_OVERLAPPED) and not inheritable.

import (
	"fmt"
	"net/netip"

	"golang.org/x/sys/windows"
)

// toSockaddr converts ap to a windows.Sockaddr; IPv4-mapped IPv6
// addresses become IPv4.
func toSockaddr(ap netip.AddrPort) (windows.Sockaddr, error) {
	addr := ap.Addr().Unmap()
	switch {
	case addr.Is4():
		return &windows.SockaddrInet4{Port: int(ap.Port()), Addr: addr.As4()}, nil
	case addr.Is6():
		return &windows.SockaddrInet6{Port: int(ap.Port()), Addr: addr.As16()}, nil
	}
	return nil, fmt.Errorf("invalid address %v", ap)
}

// fromSockaddr converts an AF_INET or AF_INET6 sockaddr; others give the
// zero AddrPort.
func fromSockaddr(sa windows.Sockaddr) netip.AddrPort {
	switch sa := sa.(type) {
	case *windows.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), uint16(sa.Port))
	case *windows.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr), uint16(sa.Port))
	}
	return netip.AddrPort{}
}

func family(ap netip.AddrPort) int32 {
	if ap.Addr().Unmap().Is4() {
		return windows.AF_INET
	}
	return windows.AF_INET6
}

// socket creates an overlapped, non-inheritable TCP socket.
func socket(family int32) (windows.Handle, error) {
	if err := wsaInit(); err != nil {
		return windows.InvalidHandle, err
	}
	return windows.WSASocket(family, windows.SOCK_STREAM, windows.IPPROTO_TCP, nil, 0,
		windows.WSA_FLAG_OVERLAPPED|windows.WSA_FLAG_NO_HANDLE_INHERIT)
}

// Socket returns a new TCP socket for connecting to ap (matching its
// family), overlapped, not inheritable, with TCP_NODELAY, as an Op.Fd.
func Socket(ap netip.AddrPort) (int, error) {
	h, err := socket(family(ap))
	if err != nil {
		return -1, fmt.Errorf("iocp: socket: %w", err)
	}
	if err := windows.SetsockoptInt(h, windows.IPPROTO_TCP, windows.TCP_NODELAY, 1); err != nil {
		windows.Closesocket(h)
		return -1, fmt.Errorf("iocp: socket: nodelay: %w", err)
	}
	return int(h), nil
}

// Listen returns a listening TCP socket bound to addr ("ip:port"; port 0
// picks a free port, see LocalAddr), as an Op.Fd. SO_REUSEADDR is not set:
// on Windows it would let another socket steal the port.
func Listen(addr string) (int, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return -1, fmt.Errorf("iocp: listen: %w", err)
	}
	sa, err := toSockaddr(ap)
	if err != nil {
		return -1, fmt.Errorf("iocp: listen: %w", err)
	}
	h, err := socket(family(ap))
	if err != nil {
		return -1, fmt.Errorf("iocp: listen: socket: %w", err)
	}
	if err := windows.Bind(h, sa); err != nil {
		windows.Closesocket(h)
		return -1, fmt.Errorf("iocp: listen: bind %v: %w", ap, err)
	}
	if err := windows.Listen(h, windows.SOMAXCONN); err != nil {
		windows.Closesocket(h)
		return -1, fmt.Errorf("iocp: listen: listen %v: %w", ap, err)
	}
	return int(h), nil
}

// LocalAddr returns the address the socket fd is bound to (getsockname).
func LocalAddr(fd int) (netip.AddrPort, error) {
	sa, err := windows.Getsockname(windows.Handle(uintptr(fd)))
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("iocp: getsockname: %w", err)
	}
	return fromSockaddr(sa), nil
}
