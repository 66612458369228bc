//go:build !darwin && !freebsd

package kqueue

import (
	"errors"
	"testing"
)

// TestOpenUnsupported: off darwin and freebsd the package exists, and Open
// fails cleanly instead of pretending to work.
func TestOpenUnsupported(t *testing.T) {
	b, err := Open(Options{})
	if b != nil || !errors.Is(err, errors.ErrUnsupported) || !errors.Is(err, ErrNotSupportedOnOS) {
		t.Fatalf("Open = %v, %v; want nil and ErrNotSupportedOnOS", b, err)
	}
}
