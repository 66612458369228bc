//go:build !linux

package uring

import (
	"fmt"

	"github.com/jadevm/jade/internal/evpoll"
)

// Open is only implemented on Linux; elsewhere it returns an error
// wrapping [evpoll.ErrNotSupportedOnOS] (kqueue and IOCP live in their own packages).
func Open(Options) (evpoll.Backend, error) {
	return nil, fmt.Errorf("uring: open: %w", evpoll.ErrNotSupportedOnOS)
}
