//go:build linux

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
//
// The peak is the child's VmHWM, polled while it runs: wait4's ru_maxrss
// starts from the test process's own peak (a child forked with
// CLONE_VM|CLONE_VFORK inherits its parent's high-water mark at exec), so
// it measures this package's earlier tests, not the child. Each program
// sleeps a few hundred milliseconds after its peak so that a poll sees it.
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
			require.NoError(t, cmd.Start())
			hwm := pollHWM(cmd.Process.Pid)
			err := cmd.Wait()
			rss := hwm()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else {
				require.NoError(t, err)
			}
			show := func(s string) string { return s[:min(len(s), 600)] }
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

// pollHWM polls the VmHWM of process pid every 2 ms until the returned
// function is called (after the process has been waited for), which
// returns the largest value seen, in bytes.
func pollHWM(pid int) func() int64 {
	var peak atomic.Int64
	stop, done := make(chan struct{}), make(chan struct{})
	path := fmt.Sprintf("/proc/%d/status", pid)
	go func() {
		defer close(done)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			if b, err := os.ReadFile(path); err == nil {
				for _, line := range strings.Split(string(b), "\n") {
					if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
						f := strings.Fields(v)
						if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil && kb<<10 > peak.Load() {
							peak.Store(kb << 10)
						}
					}
				}
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() int64 {
		close(stop)
		<-done
		return peak.Load()
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
