package testkit

import (
	"runtime"
	"testing"

	"github.com/jadevm/jade/internal/feature"
)

// Pollers runs f once per completion backend of this OS, each as a
// subtest: io_uring and epoll on Linux (JADE_POLLER, read when a bus or
// runtime starts; the uring leg ends through feature.Missing where the
// machine has no io_uring), the one backend elsewhere (kqueue, IOCP),
// without a subtest.
func Pollers(t *testing.T, f func(t *testing.T)) {
	t.Helper()
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
