//go:build linux || darwin || freebsd

package evpolltest

import (
	"net/netip"

	"github.com/jadevm/jade/internal/evpoll/unixsock"
)

// UnixSockets are the sockets of the Unix backends (uring, kqueue): made
// by package evpoll/unixsock, non-blocking and close-on-exec, the way
// package iosys makes them for the runtime.
var UnixSockets Sockets = SocketFuncs{
	ListenFunc:    func(ap netip.AddrPort) (int, error) { return unixsock.Listen(ap, false) },
	SocketFunc:    unixsock.Socket,
	LocalAddrFunc: unixsock.LocalAddr,
}
