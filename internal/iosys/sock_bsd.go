//go:build darwin || freebsd

package iosys

import (
	"fmt"

	"github.com/jadevm/jade/internal/evpoll/unixsock"
	"golang.org/x/sys/unix"
)

// AcceptNow accepts a connection waiting on the non-blocking listening
// socket fd, as a non-blocking, close-on-exec socket, without waiting:
// unix.EAGAIN when none is waiting.
func AcceptNow(fd int) (int, error) {
	nfd, _, err := unixsock.Accept(fd)
	if err != nil {
		return -1, fmt.Errorf("iosys: accept: %w", err)
	}
	return nfd, nil
}

// SendNow sends what of buf the connected non-blocking socket fd takes
// without waiting and returns how much that was: unix.EAGAIN when it
// takes nothing. A closed peer is EPIPE, never SIGPIPE
// (unixsock.SendFlags, SO_NOSIGPIPE).
func SendNow(fd int, buf []byte) (int, error) {
	n, err := unix.SendmsgN(fd, buf, nil, nil, unixsock.SendFlags)
	if err != nil {
		return 0, fmt.Errorf("iosys: send: %w", err)
	}
	return n, nil
}

// recvDontWait is recvfrom(2) with MSG_DONTWAIT.
func recvDontWait(fd int, buf []byte) (int, error) {
	n, _, err := unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT)
	return n, err
}
