//go:build linux || darwin || freebsd

package iosys

import (
	"fmt"

	"github.com/jadevm/jade/internal/evpoll/readiness"
	"golang.org/x/sys/unix"
)

// RecvNow reads what connected socket fd holds now into buf, without
// waiting (MSG_DONTWAIT), and returns how much that was: 0 at the peer's
// end of stream, unix.EAGAIN when nothing is there.
func RecvNow(fd int, buf []byte) (int, error) {
	for {
		n, err := recvDontWait(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("iosys: recv: %w", err)
		}
		return n, nil
	}
}

// PollNow reports, without waiting, whether socket fd is readable: it
// holds bytes or a connection to accept, its peer ended the stream, or it
// failed (poll(2) with a zero timeout; it consumes nothing).
func PollNow(fd int) (bool, error) {
	res, done := readiness.PollNow(fd, nil)
	if done && res < 0 {
		return false, fmt.Errorf("iosys: poll: %w", unix.Errno(-res))
	}
	return done, nil
}
