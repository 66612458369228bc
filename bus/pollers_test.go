package bus_test

import (
	"runtime"
	"testing"

	"github.com/jadevm/jade/internal/feature"
)

// forPollers runs f once per completion backend: io_uring and epoll on
// Linux (JADE_POLLER, read when a bus starts), the one backend elsewhere.
func forPollers(t *testing.T, f func(t *testing.T)) {
	if runtime.GOOS != "linux" {
		f(t)
		return
	}
	for _, p := range []string{"uring", "epoll"} {
		t.Run(p, func(t *testing.T) {
			if err := uringUnavailable(); p == "uring" && err != nil {
				feature.Missing(t, "io_uring", err) // qemu-user, old kernels, seccomp
			}
			t.Setenv("JADE_POLLER", p)
			f(t)
		})
	}
}
