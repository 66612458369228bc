package testkit

import (
	"sync"

	"github.com/jadevm/jade/uring"
)

// uringUnavailable is why io_uring cannot be used on this machine, or nil
// (probed once).
var uringUnavailable = sync.OnceValue(func() error {
	b, err := uring.OpenRing(uring.Options{})
	if err != nil {
		if uring.Unavailable(err) {
			return err
		}
		return nil // another error: the test itself meets and reports it
	}
	b.Close()
	return nil
})
