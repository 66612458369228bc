package main

import (
	"os"
	"os/exec"
	"path/filepath"
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

// TestMain removes the shared binary after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// jadeBinary builds the jade command once per test binary and returns its
// path; it skips in -short mode.
func jadeBinary(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the jade binary")
	}
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "jade-bin-"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "jade")
		binOut, binErr = exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
	})
	if binErr != nil {
		t.Fatalf("build: %v\n%s", binErr, binOut)
	}
	return binPath
}
