//go:build linux

package uring

import (
	"errors"
	"fmt"

	"github.com/jadevm/jade/internal/evpoll"
	"golang.org/x/sys/unix"
)

// Open returns the backend selected by o.Poller, else by the JADE_POLLER
// environment variable, else "auto": io_uring when it can be set up, and
// epoll when io_uring_setup fails with ENOSYS, EPERM or EINVAL or the
// kernel lacks a needed feature (the epoll backend's Reason says why).
// "uring" and "epoll" force a backend; a forced io_uring that fails is an
// error, never a silent fallback.
func Open(o Options) (evpoll.Backend, error) {
	if err := CheckPoller(o); err != nil {
		return nil, err
	}
	mode, src := PollerSetting(o)
	switch mode {
	case "epoll":
		return OpenEpoll(o, src+"=epoll")
	case "uring", "io_uring":
		return OpenRing(o)
	case "", "auto":
		r, err := OpenRing(o)
		if err == nil {
			return r, nil
		}
		if !Unavailable(err) {
			return nil, err
		}
		return OpenEpoll(o, "io_uring unavailable: "+err.Error())
	}
	return nil, fmt.Errorf("uring: open: %s=%q: %w", src, mode, ErrUnknownPoller) // unreachable after CheckPoller
}

// Unavailable reports whether err from OpenRing means "io_uring cannot be
// used here" (ENOSYS, EPERM, EINVAL, or a missing feature), as opposed to a
// resource error such as EMFILE or ENOMEM.
func Unavailable(err error) bool {
	return errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) ||
		errors.Is(err, unix.EINVAL) || errors.Is(err, errors.ErrUnsupported)
}
