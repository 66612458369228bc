//go:build !darwin && !freebsd

package kqueue

import (
	"testing"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/evpoll/evpolltest"
)

// TestOpenUnsupported: off darwin and freebsd the package exists, and Open
// fails cleanly instead of pretending to work.
func TestOpenUnsupported(t *testing.T) {
	b, err := Open(Options{})
	evpolltest.Unsupported(t, b, err, evpoll.ErrNotSupportedOnOS)
}
