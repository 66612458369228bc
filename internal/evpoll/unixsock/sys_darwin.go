//go:build darwin

package unixsock

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// SendFlags are the flags of a socket send. macOS suppresses SIGPIPE per
// socket with SO_NOSIGPIPE (see [NoSigpipe]) instead of MSG_NOSIGNAL.
const SendFlags = 0

// NoSigpipe sets SO_NOSIGPIPE, so that a send to a closed peer fails with
// EPIPE instead of raising SIGPIPE.
func NoSigpipe(fd int) {
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_NOSIGPIPE, 1)
}

// Accept accepts a connection on the listening socket fd. macOS has no
// accept4: close-on-exec is set under syscall.ForkLock (so no concurrent
// fork+exec inherits the descriptor), then O_NONBLOCK and SO_NOSIGPIPE.
func Accept(fd int) (int, unix.Sockaddr, error) {
	syscall.ForkLock.RLock()
	nfd, sa, err := unix.Accept(fd)
	if err == nil {
		unix.CloseOnExec(nfd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1, nil, err
	}
	return nonblocking(nfd, sa)
}

// NewSocket creates a non-blocking, close-on-exec TCP socket of family
// (with SO_NOSIGPIPE), close-on-exec set under syscall.ForkLock.
func NewSocket(family int) (int, error) {
	syscall.ForkLock.RLock()
	fd, err := unix.Socket(family, unix.SOCK_STREAM, unix.IPPROTO_TCP)
	if err == nil {
		unix.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1, err
	}
	fd, _, err = nonblocking(fd, nil)
	return fd, err
}

// nonblocking sets O_NONBLOCK and SO_NOSIGPIPE on fd, or closes it.
func nonblocking(fd int, sa unix.Sockaddr) (int, unix.Sockaddr, error) {
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, nil, err
	}
	NoSigpipe(fd)
	return fd, sa, nil
}
