//go:build linux

package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMemoryShapesStayUnder2GiB runs each program of testdata/memory (the
// shapes of issue #18 item 5 that took 1.5–5.5 GB of host memory: unjoined
// outcomes, deep register stacks, a DAG copied out, millions of tasks)
// under the default limits, in a jade process of its own, and checks its
// exit code and messages (the headers of TestHostilePrograms) and that its
// peak RSS stayed under 2 GiB.
func TestMemoryShapesStayUnder2GiB(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the jade binary and runs programs that use about a gigabyte each")
	}
	bin := jadeBinary(t)
	paths, err := filepath.Glob(filepath.Join("testdata", "memory", "*.jasm"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want := readExpect(t, path)
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(bin, "run", path)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else {
				require.NoError(t, err)
			}
			show := func(s string) string { return s[:min(len(s), 600)] }
			require.Equal(t, want.exit, code, "stdout %s\nstderr %s", show(stdout.String()), show(stderr.String()))
			for _, s := range want.stdout {
				require.Contains(t, stdout.String(), s, "stdout")
			}
			for _, s := range want.stderr {
				require.Contains(t, stderr.String(), s, "stderr")
			}
			ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			require.True(t, ok, "no rusage")
			rss := int64(ru.Maxrss) << 10 // KiB on Linux
			t.Logf("%s: peak RSS %d MiB; %s", path, rss>>20, strings.TrimSpace(show(stdout.String())))
			require.Less(t, rss, int64(2)<<30, "peak RSS")
		})
	}
}
