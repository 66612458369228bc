package feature

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeTB records how Missing ended a test.
type fakeTB struct {
	testing.TB
	failed, skipped bool
	msg             string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = true
	f.msg = format
}
func (f *fakeTB) Skipf(format string, args ...any) {
	f.skipped = true
	f.msg = format
}

func TestMissing(t *testing.T) {
	cause := errors.New("uring: setup: function not implemented (kernel without io_uring)")
	for _, c := range []struct {
		env        string
		fail, skip bool
	}{
		{"", false, true},
		{"io_uring", true, false},
		{"ipv6,io_uring", true, false},
		{"io_uring_x", false, true},
	} {
		t.Setenv(Env, c.env)
		f := &fakeTB{}
		Missing(f, "io_uring", cause)
		require.Equal(t, c.fail, f.failed, "JADE_REQUIRE=%q", c.env)
		require.Equal(t, c.skip, f.skipped, "JADE_REQUIRE=%q", c.env)
	}
}

func TestSignals(t *testing.T) {
	t.Setenv(EmulatorEnv, "qemu-user")
	f := &fakeTB{}
	Signals(f)
	require.True(t, f.skipped)
	t.Setenv(EmulatorEnv, "")
	f = &fakeTB{}
	Signals(f)
	require.False(t, f.skipped)
}

// TestExec: a program the kernel runs passes, a file it refuses to run
// (ENOEXEC, as an arm64 binary is on x86-64 without binfmt_misc) is
// reported missing.
func TestExec(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs a #! script and an ENOEXEC for a file that is no program, which Windows has neither of")
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	require.NoError(t, os.WriteFile(good, []byte("#!/bin/sh\nexit 0\n"), 0o755))
	f := &fakeTB{}
	Exec(f, good)
	require.False(t, f.skipped || f.failed, f.msg)
	junk := filepath.Join(dir, "junk")
	require.NoError(t, os.WriteFile(junk, []byte{0x7f, 'E', 'L', 'F', 0, 0, 0, 0}, 0o755))
	f = &fakeTB{}
	Exec(f, junk)
	require.True(t, f.skipped, "a file the kernel cannot execute")
}
