package iocp

import (
	"errors"
	"fmt"
	"runtime"
)

// Options configure [Open]. The zero value is a sensible default.
type Options struct {
	// MaxInFlight bounds the ops in flight (submitted and not yet returned
	// by Wait): the size of the slot table (default 4096). Submit fails
	// with evpoll.ErrTooMany above it.
	MaxInFlight int

	// PoolSize is the number of goroutines that run Open (CreateFileW,
	// which can block) off the caller's thread (default 4).
	PoolSize int
}

// ErrNotSupportedOnOS is returned (wrapped) by Open on systems other than
// Windows. It wraps errors.ErrUnsupported.
var ErrNotSupportedOnOS = fmt.Errorf("%w on %s", errors.ErrUnsupported, runtime.GOOS)
