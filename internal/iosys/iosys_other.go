//go:build !linux && !darwin && !freebsd && !windows

package iosys

import (
	"fmt"

	"github.com/jadevm/jade/internal/evpoll"
)

// ErrUnsupported says that this build has no completion backend wired in.
var ErrUnsupported = fmt.Errorf("iosys: no completion backend wired in: %w", evpoll.ErrNotSupportedOnOS)

// Open reports ErrUnsupported.
func Open(worker int) (evpoll.Backend, error) { return nil, ErrUnsupported }

// CheckConfig checks the environment that Open reads; this backend reads
// none (JADE_POLLER selects between the Linux backends only).
func CheckConfig() error { return nil }
