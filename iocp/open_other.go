//go:build !windows

package iocp

import (
	"fmt"

	"github.com/jadevm/jade/internal/evpoll"
)

// Open is only implemented on Windows; elsewhere it returns an error
// wrapping [evpoll.ErrNotSupportedOnOS].
func Open(Options) (evpoll.Backend, error) {
	return nil, fmt.Errorf("iocp: open: %w", evpoll.ErrNotSupportedOnOS)
}
