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
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
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

// EmulatorEnv names the emulator a platform run executes the tests under
// ("qemu-user" from scripts/arm64/run.sh); empty when native.
const EmulatorEnv = "JADE_EMULATOR"

// Signals ends tb with a skip when the tests run under qemu-user, which
// now and then loses a signal sent to the emulated process:
// scripts/arm64/sigloss.sh sends SIGUSR1 then SIGINT to the same amd64
// jade natively (never lost) and under qemu-x86_64 (some lost). Tests
// that send signals and wait for their effect call it.
func Signals(tb testing.TB) {
	tb.Helper()
	if e := os.Getenv(EmulatorEnv); e == "qemu-user" {
		tb.Skipf("%s=%s: qemu-user loses signals sent to the emulated process now and then (scripts/arm64/sigloss.sh)", EmulatorEnv, e)
	}
}

// Exec ends tb, as Missing with the feature "exec", when this machine
// cannot execute the program at path (a test binary, run with -test.run
// matching nothing): under qemu-user without binfmt_misc the emulator runs
// the test binary it was handed, but the kernel refuses to start another
// arm64 program (ENOEXEC), so a test that re-executes its own binary
// cannot run.
func Exec(tb testing.TB, path string) {
	tb.Helper()
	if err := exec.Command(path, "-test.run=^$").Run(); errors.Is(err, syscall.ENOEXEC) {
		Missing(tb, "exec", err)
	}
}
