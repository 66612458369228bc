//go:build linux || darwin || freebsd

package unixsock

import (
	"fmt"
	"net/netip"

	"github.com/jadevm/jade/internal/evpoll"
	"golang.org/x/sys/unix"
)

// OpenFlags maps portable open flags to O_* bits, always with O_CLOEXEC
// and O_NONBLOCK. O_NONBLOCK makes an open never wait for the other end
// of a FIFO: a read-only open succeeds at once, and a write-only open
// with no reader fails with ENXIO. Both backend families need that: an
// open that waited would hold a blocking-pool goroutine (epoll, kqueue)
// or an io-wq thread (io_uring), past its timeout and its cancel. The
// readiness backends keep the flag on descriptors they poll (a read of
// a FIFO must never block the worker) and clear it on those they hand
// to the pool; io_uring clears it at the open's completion (see
// [ClearNonblock]).
func OpenFlags(f evpoll.OpenFlag) int {
	fl := unix.O_CLOEXEC | unix.O_NONBLOCK
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

// ClearNonblock takes O_NONBLOCK off the descriptor fd that Open returned
// for flags f, with one fcntl(F_SETFL): of the status flags that F_SETFL
// sets, only O_APPEND can come from f.
func ClearNonblock(fd int, f evpoll.OpenFlag) error {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, OpenFlags(f)&unix.O_APPEND)
	return err
}
