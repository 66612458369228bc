package winsock

import (
	"fmt"
	"net/netip"
	"sync"

	"golang.org/x/sys/windows"
)

// Init calls WSAStartup once for the process (Winsock 2.2). Go's net
// package does the same; the calls are reference counted.
var Init = sync.OnceValue(func() error {
	var d windows.WSAData
	return windows.WSAStartup(uint32(0x202), &d)
})

// NewSocket creates an overlapped, non-inheritable TCP socket of family.
func NewSocket(family int32) (windows.Handle, error) {
	if err := Init(); err != nil {
		return windows.InvalidHandle, err
	}
	return windows.WSASocket(family, windows.SOCK_STREAM, windows.IPPROTO_TCP, nil, 0,
		windows.WSA_FLAG_OVERLAPPED|windows.WSA_FLAG_NO_HANDLE_INHERIT)
}

// Family is the address family of a socket for ap: AF_INET for IPv4 and
// IPv4-mapped IPv6 addresses, AF_INET6 otherwise.
func Family(ap netip.AddrPort) int32 {
	if ap.Addr().Unmap().Is4() {
		return windows.AF_INET
	}
	return windows.AF_INET6
}

// ToSockaddr converts ap to a windows.Sockaddr; IPv4-mapped IPv6
// addresses become IPv4. An invalid address is an error.
func ToSockaddr(ap netip.AddrPort) (windows.Sockaddr, error) {
	addr := ap.Addr().Unmap()
	switch {
	case addr.Is4():
		return &windows.SockaddrInet4{Port: int(ap.Port()), Addr: addr.As4()}, nil
	case addr.Is6():
		return &windows.SockaddrInet6{Port: int(ap.Port()), Addr: addr.As16()}, nil
	}
	return nil, fmt.Errorf("invalid address %v", ap)
}

// FromSockaddr converts an AF_INET or AF_INET6 sockaddr; others give the
// zero AddrPort.
func FromSockaddr(sa windows.Sockaddr) netip.AddrPort {
	switch sa := sa.(type) {
	case *windows.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), uint16(sa.Port))
	case *windows.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr), uint16(sa.Port))
	}
	return netip.AddrPort{}
}

// Socket returns a new TCP socket for connecting to ap (matching its
// family), overlapped, not inheritable, with TCP_NODELAY. Errors start
// "socket: "; the caller prefixes its package.
func Socket(ap netip.AddrPort) (int, error) {
	h, err := NewSocket(Family(ap))
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	if err := windows.SetsockoptInt(h, windows.IPPROTO_TCP, windows.TCP_NODELAY, 1); err != nil {
		windows.Closesocket(h)
		return -1, fmt.Errorf("socket: nodelay: %w", err)
	}
	return int(h), nil
}

// Listen returns an overlapped TCP socket bound to ap and listening.
// SO_REUSEADDR is not set: on Windows it would let another socket steal
// the port. Errors start "listen: "; the caller prefixes its package.
func Listen(ap netip.AddrPort) (int, error) {
	sa, err := ToSockaddr(ap)
	if err != nil {
		return -1, fmt.Errorf("listen: %w", err)
	}
	h, err := NewSocket(Family(ap))
	if err != nil {
		return -1, fmt.Errorf("listen: socket: %w", err)
	}
	if err := windows.Bind(h, sa); err != nil {
		windows.Closesocket(h)
		return -1, fmt.Errorf("listen: bind %v: %w", ap, err)
	}
	if err := windows.Listen(h, windows.SOMAXCONN); err != nil {
		windows.Closesocket(h)
		return -1, fmt.Errorf("listen: listen %v: %w", ap, err)
	}
	return int(h), nil
}

// LocalAddr returns the address the socket fd is bound to (getsockname).
// Its error starts "getsockname: ".
func LocalAddr(fd int) (netip.AddrPort, error) {
	sa, err := windows.Getsockname(windows.Handle(uintptr(fd)))
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("getsockname: %w", err)
	}
	return FromSockaddr(sa), nil
}
