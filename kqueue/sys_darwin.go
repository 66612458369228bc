//go:build darwin

package kqueue

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// sendFlags are the send flags of Send. macOS suppresses SIGPIPE per
// socket with SO_NOSIGPIPE (see noSigpipe) instead of MSG_NOSIGNAL.
const sendFlags = 0

// noSigpipe sets SO_NOSIGPIPE, so that a send to a closed peer fails with
// EPIPE instead of raising SIGPIPE.
func noSigpipe(fd int) {
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_NOSIGPIPE, 1)
}

// accept accepts a connection on the listening socket fd. macOS has no
// accept4: close-on-exec is set under syscall.ForkLock (so no concurrent
// fork+exec inherits the descriptor), then O_NONBLOCK.
func accept(fd int) (int, unix.Sockaddr, error) {
	syscall.ForkLock.RLock()
	nfd, sa, err := unix.Accept(fd)
	if err == nil {
		unix.CloseOnExec(nfd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1, nil, err
	}
	if err := unix.SetNonblock(nfd, true); err != nil {
		unix.Close(nfd)
		return -1, nil, err
	}
	noSigpipe(nfd)
	return nfd, sa, nil
}

// socket creates a non-blocking, close-on-exec TCP socket (with
// SO_NOSIGPIPE) under syscall.ForkLock.
func socket(family int) (int, error) {
	syscall.ForkLock.RLock()
	fd, err := unix.Socket(family, unix.SOCK_STREAM, unix.IPPROTO_TCP)
	if err == nil {
		unix.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, err
	}
	noSigpipe(fd)
	return fd, nil
}
