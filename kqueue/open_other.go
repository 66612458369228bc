//go:build !darwin && !freebsd

package kqueue

import (
	"fmt"

	"github.com/jadevm/jade/internal/evpoll"
)

// Open is only implemented on darwin and freebsd; elsewhere it returns an
// error wrapping [evpoll.ErrNotSupportedOnOS].
func Open(Options) (evpoll.Backend, error) {
	return nil, fmt.Errorf("kqueue: open: %w", evpoll.ErrNotSupportedOnOS)
}
