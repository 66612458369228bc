//go:build linux || freebsd

package unixsock

import "golang.org/x/sys/unix"

// SendFlags are the flags of a socket send: a broken pipe is EPIPE, never
// SIGPIPE.
const SendFlags = unix.MSG_NOSIGNAL

// NoSigpipe does nothing here, where sends pass MSG_NOSIGNAL.
func NoSigpipe(int) {}

// Accept accepts a connection on the listening socket fd with accept4, the
// new socket non-blocking and close-on-exec.
func Accept(fd int) (int, unix.Sockaddr, error) {
	return unix.Accept4(fd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
}

// NewSocket creates a non-blocking, close-on-exec TCP socket of family.
// On Linux, io_uring's ACCEPT, CONNECT, RECV and SEND ignore O_NONBLOCK
// (the kernel arms its internal poll instead of returning EAGAIN; checked
// by uring's TestNonblockingSocketsOnRing), so one socket serves both
// Linux backends.
func NewSocket(family int) (int, error) {
	return unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
}
