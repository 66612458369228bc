package iosys

import (
	"fmt"
	"net/netip"
	"strings"
)

// The halves of a connection that Shutdown stops.
const (
	ShutRead  = 0 // no more reads; unread and later input is discarded
	ShutWrite = 1 // no more writes: the peer reads end of stream after the data sent
	ShutBoth  = 2
)

// ParseAddr parses "ip:port" or "[ipv6]:port". An empty host (":8080")
// means the IPv4 wildcard, and "localhost" means 127.0.0.1; no other names
// are resolved (the runtime never does DNS).
func ParseAddr(s string) (netip.AddrPort, error) {
	switch {
	case strings.HasPrefix(s, ":"):
		s = "0.0.0.0" + s
	case strings.HasPrefix(s, "localhost:"):
		s = "127.0.0.1" + strings.TrimPrefix(s, "localhost")
	}
	return netip.ParseAddrPort(s)
}

// prefix is the start of a socket error: the name of the backend that
// will drive the socket ("epoll", "io_uring", "kqueue", "iocp"), or
// "iosys" when the caller has none, so that an error text says which
// backend ran.
func prefix(backend string) string {
	if backend == "" {
		return "iosys"
	}
	return backend
}

// Socket parses addr and returns a TCP socket to connect to it, made the
// way this OS's backend needs (non-blocking or overlapped, close-on-exec,
// TCP_NODELAY), with the parsed address. Its errors start with backend,
// the name of the backend that will drive the socket. The caller owns
// the socket (see the package doc).
func Socket(backend, addr string) (int, netip.AddrPort, error) {
	ap, err := ParseAddr(addr)
	if err != nil {
		return -1, ap, fmt.Errorf("%s: parse address: %w", prefix(backend), err)
	}
	fd, err := newSocket(ap)
	if err != nil {
		return -1, ap, fmt.Errorf("%s: %w", prefix(backend), err)
	}
	return fd, ap, nil
}

// Listen returns a listening TCP socket bound to addr ("host:port"; port
// 0 picks a free port, see LocalAddr), made the way this OS's backend
// needs. Its errors start "iosys".
func Listen(addr string) (int, error) { return ListenWith("", addr, false) }

// ListenWith is Listen with SO_REUSEPORT set when reusePort is true, so
// that several listeners (one per process, say) share the port and the
// kernel spreads connections among them. Its errors start with backend,
// the name of the backend that will drive the socket.
func ListenWith(backend, addr string, reusePort bool) (int, error) {
	ap, err := ParseAddr(addr)
	if err != nil {
		return -1, fmt.Errorf("%s: parse address: %w", prefix(backend), err)
	}
	fd, err := listen(ap, reusePort)
	if err != nil {
		return -1, fmt.Errorf("%s: %w", prefix(backend), err)
	}
	return fd, nil
}
