//go:build darwin || freebsd

package iosys

import (
	"fmt"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/kqueue"
)

// Open opens the kqueue backend of one worker.
func Open(worker int) (evpoll.Backend, error) {
	b, err := kqueue.Open(kqueue.Options{})
	if err != nil {
		return nil, fmt.Errorf("iosys: open worker %d: %w", worker, err)
	}
	return b, nil
}

// CheckConfig checks the environment that Open reads; this backend reads
// none (JADE_POLLER selects between the Linux backends only).
func CheckConfig() error { return nil }
