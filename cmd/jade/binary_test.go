package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// The tests that run jade as a process share one build of it.
var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
	binOut  []byte
)

// launchHook, when a test file sets it, runs before the tests: when it
// reports true, the test binary was started as a helper process and exits
// with the code it returns (rssLaunch).
var launchHook func() (code int, launched bool)

// TestMain removes the shared binary after the tests.
func TestMain(m *testing.M) {
	if launchHook != nil {
		if code, ok := launchHook(); ok {
			os.Exit(code)
		}
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// jadeBinary returns the jade command for a test to run: JADE_BIN when it
// is set (the platform runs of scripts/windows and scripts/arm64, where
// there is no go command or it would build for another machine), else one
// built once per test binary with go. It skips in -short mode, and when
// there is neither JADE_BIN nor a go command.
func jadeBinary(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the jade binary")
	}
	if bin := os.Getenv("JADE_BIN"); bin != "" {
		return bin
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("no go command to build jade with (%v) and JADE_BIN is not set", err)
	}
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "jade-bin-"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "jade")
		if runtime.GOOS == "windows" {
			binPath += ".exe"
		}
		binOut, binErr = exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
	})
	if binErr != nil {
		t.Fatalf("build: %v\n%s", binErr, binOut)
	}
	return binPath
}
