//go:build linux

package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMemoryShapesStayWithinTheirBudget runs each program of
// testdata/budget (memory the engine's budget did not see: names pinning
// their source strings, periodic jobs kept after free, completed
// children kept by their handles) with jade run --max-memory set from its
// "; max-memory: BYTES" line, in a jade process of its own, and checks its
// exit code and messages (the headers of TestHostilePrograms) and that its
// peak RSS stayed within twice that budget: each shape must end in a
// catchable ResourceError or a trap of the offending task, not in host
// memory the budget does not count.
func TestMemoryShapesStayWithinTheirBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the jade binary and runs programs that fill a memory budget")
	}
	bin := jadeBinary(t)
	paths, err := filepath.Glob(filepath.Join("testdata", "budget", "*.jasm"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want := readExpect(t, path)
			budget := readBudget(t, path)
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(bin, "run", "--max-memory", strconv.FormatInt(budget, 10), path)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else {
				require.NoError(t, err)
			}
			show := func(s string) string { return s[:min(len(s), 600)] }
			ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			require.True(t, ok, "no rusage")
			rss := int64(ru.Maxrss) << 10 // KiB on Linux
			t.Logf("%s: peak RSS %d MiB under a budget of %d MiB; %s", path, rss>>20, budget>>20, strings.TrimSpace(show(stdout.String())))
			require.Equal(t, want.exit, code, "stdout %s\nstderr %s", show(stdout.String()), show(stderr.String()))
			for _, s := range want.stdout {
				require.Contains(t, stdout.String(), s, "stdout")
			}
			for _, s := range want.stderr {
				require.Contains(t, stderr.String(), s, "stderr")
			}
			require.Less(t, rss, 2*budget, "peak RSS against twice the budget")
		})
	}
}

// readBudget returns the "; max-memory: BYTES" of the program at path.
func readBudget(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "; max-memory: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err, "%s: max-memory", path)
			return n
		}
	}
	require.NoError(t, sc.Err())
	t.Fatalf("%s: no max-memory line", path)
	return 0
}
