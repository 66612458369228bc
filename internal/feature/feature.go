// Package feature gates tests on what the machine provides, as
// cilium/ebpf's feature-gated tests do: a test that needs a feature the
// machine lacks skips and says which and why, unless the environment
// variable JADE_REQUIRE names that feature; then the test fails, so a CI
// machine that is meant to have the feature cannot pass by skipping.
//
// JADE_REQUIRE is a comma-separated list of feature names. The one used
// today is "io_uring": CI on a kernel with io_uring sets
// JADE_REQUIRE=io_uring, while the arm64 run under qemu-user (which has no
// io_uring_setup) leaves it unset and the uring-forced tests skip.
package feature

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// Env is the environment variable listing the required features.
const Env = "JADE_REQUIRE"

// Required reports whether JADE_REQUIRE lists name.
func Required(name string) bool {
	return slices.Contains(strings.Split(os.Getenv(Env), ","), name)
}

// Missing ends tb because the feature name is unavailable, for the reason
// err: tb fails if JADE_REQUIRE lists name, and skips otherwise.
func Missing(tb testing.TB, name string, err error) {
	tb.Helper()
	if Required(name) {
		tb.Fatalf("%s is unavailable, and %s=%s says this machine must have it: %v", name, Env, os.Getenv(Env), err)
		return
	}
	tb.Skipf("%s is unavailable on this machine (set %s=%s to make this a failure): %v", name, Env, name, err)
}
