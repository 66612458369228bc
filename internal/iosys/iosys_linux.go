//go:build linux

package iosys

import (
	"fmt"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/uring"
)

// Open opens the completion backend of one worker. It must be called on
// the worker's locked OS thread: an io_uring ring is opened with the
// owner-thread flags (SINGLE_ISSUER, DEFER_TASKRUN), the topology chosen by
// measurement in package uring.
func Open(worker int) (evpoll.Backend, error) {
	b, err := uring.Open(uring.Options{OwnerThread: true})
	if err != nil {
		return nil, fmt.Errorf("iosys: open worker %d: %w", worker, err)
	}
	return b, nil
}

// CheckConfig checks the environment that Open reads (JADE_POLLER) without
// opening a backend, so that a bad setting fails the runtime's creation
// instead of leaving every worker without I/O.
func CheckConfig() error { return uring.CheckPoller(uring.Options{}) }
