//go:build linux

package uring

// Socket helpers that do not use package net: address parsing, the raw
// sockaddr encoding the ring and epoll hand to the kernel, and
// Listen/Socket over x/sys/unix (the setup shared with kqueue lives in
// package evpoll/unixsock). Every socket they create is close-on-exec and
// non-blocking: epoll needs that, and io_uring's ACCEPT/CONNECT/RECV/SEND
// ignore O_NONBLOCK (the kernel arms its internal poll instead of
// returning EAGAIN; checked by TestNonblockingSocketsOnRing).

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"
	"unsafe"

	"github.com/jadevm/jade/evpoll/unixsock"
	"golang.org/x/sys/unix"
)

// ParseAddr parses "ip:port" or "[ipv6]:port". An empty host (":8080")
// means the IPv4 wildcard, and "localhost" means 127.0.0.1; no other names
// are resolved (this package never does DNS).
func ParseAddr(s string) (netip.AddrPort, error) { return pkgSockets.ParseAddr(s) }

// Sockets are the socket helpers of ParseAddr, Socket and ListenWith with
// errors that start with Name, the name of the backend that will drive
// the socket ("epoll: listen: ...", "io_uring: parse address: ..."): the
// helpers are the same for both backends, and an error text should say
// which one ran. The package-level functions use "uring".
type Sockets struct {
	Name string
}

// pkgSockets are the helpers behind the package-level functions.
var pkgSockets = Sockets{Name: "uring"}

// ParseAddr is the package-level ParseAddr with k's error prefix.
func (k Sockets) ParseAddr(s string) (netip.AddrPort, error) {
	switch {
	case strings.HasPrefix(s, ":"):
		s = "0.0.0.0" + s
	case strings.HasPrefix(s, "localhost:"):
		s = "127.0.0.1" + strings.TrimPrefix(s, "localhost")
	}
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%s: parse address: %w", k.Name, err)
	}
	return ap, nil
}

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

// Socket returns a new TCP socket for connecting to ap (matching its
// family), non-blocking, close-on-exec, with TCP_NODELAY.
func Socket(ap netip.AddrPort) (int, error) { return pkgSockets.Socket(ap) }

// Socket is the package-level Socket with k's error prefix.
func (k Sockets) Socket(ap netip.AddrPort) (int, error) {
	fd, err := unixsock.Socket(ap, socket)
	if err != nil {
		return -1, fmt.Errorf("%s: %w", k.Name, err)
	}
	return fd, nil
}

// socket creates a non-blocking, close-on-exec TCP socket.
func socket(family int) (int, error) {
	return unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
}

// Listen returns a listening TCP socket bound to addr ("ip:port"; port 0
// picks a free port, see LocalAddr). It sets SO_REUSEADDR and is
// non-blocking and close-on-exec.
func Listen(addr string) (int, error) { return ListenWith(addr, false) }

// ListenWith is Listen with SO_REUSEPORT set when reusePort is true, so
// that several listeners (one per process, say) share the port and the
// kernel spreads connections among them.
func ListenWith(addr string, reusePort bool) (int, error) {
	return pkgSockets.ListenWith(addr, reusePort)
}

// ListenWith is the package-level ListenWith with k's error prefix.
func (k Sockets) ListenWith(addr string, reusePort bool) (int, error) {
	ap, err := k.ParseAddr(addr)
	if err != nil {
		return -1, err
	}
	fd, err := unixsock.Listen(ap, reusePort, socket)
	if err != nil {
		return -1, fmt.Errorf("%s: %w", k.Name, err)
	}
	return fd, nil
}

// LocalAddr returns the address a socket is bound to (getsockname).
func LocalAddr(fd int) (netip.AddrPort, error) {
	ap, err := unixsock.LocalAddr(fd)
	if err != nil {
		return ap, fmt.Errorf("uring: %w", err)
	}
	return ap, nil
}

// AcceptNow accepts a connection waiting on the non-blocking listening
// socket fd, as a non-blocking, close-on-exec socket, without waiting:
// unix.EAGAIN when none is waiting. A server's accept loop takes a
// backlog this way in one slice instead of one connection per run-queue
// round (the RuntimeBus's net.accept tries it before it submits).
//
// AcceptNow and SendNow cannot block, so they enter the kernel through
// RawSyscall6: entersyscall would let sysmon hand the calling worker's P
// to another goroutine, and the worker would then wait in Go's run queue
// for a P to run its tasks on, up to a Go time slice (the http scenario's
// p99 at 50 connections went from under 1 ms to 4-10 ms that way).
func AcceptNow(fd int) (int, error) {
	r, _, errno := unix.RawSyscall6(unix.SYS_ACCEPT4, uintptr(fd), 0, 0, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, 0)
	if errno != 0 {
		return -1, fmt.Errorf("uring: accept: %w", errno)
	}
	return int(r), nil
}

// SendNow sends what of buf the connected socket fd takes without waiting
// (MSG_DONTWAIT; MSG_NOSIGNAL: a closed peer is EPIPE, never SIGPIPE) and
// returns how much that was: unix.EAGAIN when it takes nothing.
func SendNow(fd int, buf []byte) (int, error) {
	var p unsafe.Pointer
	if len(buf) > 0 {
		p = unsafe.Pointer(&buf[0])
	}
	r, _, errno := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(p), uintptr(len(buf)), unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL, 0, 0)
	if errno != 0 {
		return 0, fmt.Errorf("uring: send: %w", errno)
	}
	return int(r), nil
}

// SetNoDelay sets TCP_NODELAY on fd (accepted sockets do not inherit it
// from Socket).
func SetNoDelay(fd int) error {
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
		return fmt.Errorf("uring: nodelay: %w", err)
	}
	return nil
}
