//go:build !linux && !darwin && !freebsd

package iosys

import (
	"errors"
	"fmt"
	"runtime"
)

// RecvNow reports ErrUnsupported: reads wait for the completion backend.
func RecvNow(fd int, buf []byte) (int, error) {
	return 0, fmt.Errorf("iosys: recv now: not on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// PollNow reports ErrUnsupported: the completion backend of this OS has
// no readiness polls (a socket is not a select case here).
func PollNow(fd int) (bool, error) {
	return false, fmt.Errorf("iosys: poll: no readiness polls on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}
