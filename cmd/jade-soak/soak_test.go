//go:build linux

package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/feature"
	"github.com/jadevm/jade/uring"
)

// TestMismatchNamesTheOwner: bytes of another connection are reported as
// such, so a mix-up between connections is told apart from corruption.
func TestMismatchNamesTheOwner(t *testing.T) {
	a, b := newPeer(1, shapeChurn, 7), newPeer(1, shapeChurn, 8)
	ma, mb := a.msg(100), b.msg(100)
	if bytes.Equal(ma, mb) {
		t.Fatal("two connections sent the same bytes")
	}
	if got := mismatch(mb, ma); !strings.Contains(got, "message 0 of connection b8") {
		t.Errorf("mismatch(b's bytes, a's) = %q, want it to name connection b8", got)
	}
	if got := mismatch(append([]byte(nil), ma[:50]...), ma); !strings.Contains(got, "at byte 50") {
		t.Errorf("short read: %q", got)
	}
}

// TestMemstat reads the MemStats comment lines of a debug=1 heap profile.
func TestMemstat(t *testing.T) {
	p := []byte("heap profile: 1: 2 [3: 4] @ heap/1048576\n\n# runtime.MemStats\n# HeapAlloc = 649696\n# HeapInuse = 1449984\n")
	if got := memstat(p, "HeapInuse"); got != 1449984 {
		t.Errorf("HeapInuse = %d", got)
	}
	if got := memstat(p, "HeapAlloc"); got != 649696 {
		t.Errorf("HeapAlloc = %d", got)
	}
	if got := memstat(p, "Nope"); got != -1 {
		t.Errorf("absent = %d, want -1", got)
	}
}

// needURing ends t when io_uring cannot be used here (qemu-user, old
// kernels): the soaks have a leg on it. It skips, or fails where
// JADE_REQUIRE lists io_uring.
func needURing(t *testing.T) {
	t.Helper()
	if r, err := uring.OpenRing(uring.Options{}); err == nil {
		r.Close()
	} else if uring.Unavailable(err) {
		feature.Missing(t, "io_uring", err)
	}
}

// runSoak builds jade, runs jade-soak against it with args (after the
// binary and the program), and checks that its output has every string
// of want. It returns the output.
func runSoak(t *testing.T, want []string, args ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "jade")
	built, err := exec.Command("go", "build", "-o", bin, "../jade").CombinedOutput()
	require.NoError(t, err, "build\n%s", built)
	var out bytes.Buffer
	cmd := exec.Command("go", append([]string{"run", ".", "-jade", bin, "-prog", "../../examples/echo.jasm"}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	t.Logf("%s", out.String())
	require.NoError(t, err, "jade-soak")
	for _, w := range want {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q", w)
		}
	}
	return out.String()
}

// TestSoakSmall runs one small leg per backend against a freshly built
// jade: every shape, the measurements and the report. The heap check is
// switched off (at this scale the debug server's own allocations are the
// noise); the descriptor and byte checks hold.
func TestSoakSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the jade binary and runs it")
	}
	needURing(t)
	runSoak(t, []string{"== leg uring/1", "== leg epoll/2", "a concurrent 50 × 3", "e half-close 20", "jade-soak: ok"},
		"-legs", "uring/1,epoll/2", "-conns", "50", "-rounds", "3", "-churn", "100", "-slow", "10",
		"-slow-for", "1s", "-rst", "20", "-half", "20", "-repeat", "1", "-warmup", "1", "-heap-tolerance", "100")
}

// TestTenThousandConnections: 10,000 concurrent connections to one echo
// server are all served, on both backends (a server used to be killed at
// about 4,100: every backend's op table held 4,096 ops, a full table threw
// an IoError, and the examples ended main). Every byte comes back to the
// connection that sent it, and the descriptors are closed afterwards.
func TestTenThousandConnections(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the jade binary and runs it")
	}
	needURing(t)
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Max < 10_500 {
		t.Skipf("RLIMIT_NOFILE hard limit %d: 10,000 connections need about 10,100 descriptors in each process", lim.Max)
	}
	out := runSoak(t, []string{"a concurrent 10000 × 2", "jade-soak: ok"},
		"-legs", "uring/2,epoll/1", "-conns", "10000", "-rounds", "2", "-churn", "10", "-slow", "1",
		"-slow-for", "1s", "-rst", "1", "-half", "1", "-repeat", "1", "-warmup", "1", "-heap-tolerance", "100")
	// Each leg's fds line reads "N at start, A → B (P with the concurrent
	// connections open)". The server's own baseline differs between
	// machines; the 10,000 connections must all have been open at once on
	// top of it.
	fds := regexp.MustCompile(`fds +\d+ at start, \d+ → (\d+) \((\d+) with the concurrent connections open\)`)
	legs := fds.FindAllStringSubmatch(out, -1)
	require.Len(t, legs, 2, "one fds line per leg")
	for _, m := range legs {
		after, _ := strconv.Atoi(m[1])
		peak, _ := strconv.Atoi(m[2])
		require.Equal(t, 10_000, peak-after, "descriptors open at the peak above the leg's baseline: %s", m[0])
	}
}
