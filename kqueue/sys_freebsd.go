//go:build freebsd

package kqueue

import "golang.org/x/sys/unix"

// sendFlags are the send flags of Send: a broken pipe is EPIPE, never
// SIGPIPE.
const sendFlags = unix.MSG_NOSIGNAL

// noSigpipe is a no-op on FreeBSD, where Send passes MSG_NOSIGNAL.
func noSigpipe(int) {}

// accept accepts a connection on the listening socket fd with accept4, the
// new socket non-blocking and close-on-exec.
func accept(fd int) (int, unix.Sockaddr, error) {
	return unix.Accept4(fd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
}

// socket creates a non-blocking, close-on-exec TCP socket.
func socket(family int) (int, error) {
	return unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
}
