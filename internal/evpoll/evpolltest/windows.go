//go:build windows

package evpolltest

import "github.com/jadevm/jade/internal/evpoll/winsock"

// WinSockets are the sockets of the IOCP backend: made by package
// evpoll/winsock, overlapped and not inheritable, the way package iosys
// makes them for the runtime.
var WinSockets Sockets = SocketFuncs{
	ListenFunc:    winsock.Listen,
	SocketFunc:    winsock.Socket,
	LocalAddrFunc: winsock.LocalAddr,
}
