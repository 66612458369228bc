package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/require"
)

// TestJadeProfileFlags: jade run --jade-cpuprofile and --jade-heapprofile
// write pprof profiles of Jade frames; -h tells them from the Go-level
// --cpuprofile and --memprofile.
func TestJadeProfileFlags(t *testing.T) {
	dir := t.TempDir()
	cpu, heap := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "heap.prof")
	src := write(t, "loop.jasm", `.func main() -> i64
  .local i:i64, n:i64, sz:i64, b:ref
  const i, 0
  const n, 30000
  const sz, 1000
l:
  jge  i, n, d
  bnew b, sz
  addi i, i, 1
  jmp  l
d:
  ret  i
.end
`)
	var out, errb bytes.Buffer
	code := run([]string{"run", "--jade-cpuprofile", cpu, "--jade-heapprofile", heap, "--jade-profile-period", "1ms", src}, &out, &errb)
	require.Equal(t, exitSuccess, code, errb.String())
	require.Equal(t, "30000\n", out.String())
	require.NotContains(t, errb.String(), "profile", "the run's end writes the profiles without an error")
	for _, f := range []string{cpu, heap} {
		r, err := os.Open(f)
		require.NoError(t, err)
		p, err := profile.Parse(r)
		r.Close()
		require.NoError(t, err, f)
		require.NoError(t, p.CheckValid())
		for _, s := range p.Sample {
			require.Equal(t, "main", s.Location[0].Line[0].Function.Name)
		}
	}
	hp, err := os.ReadFile(heap)
	require.NoError(t, err)
	p, err := profile.ParseData(hp)
	require.NoError(t, err)
	// 30 MB at one sample in about 512 KiB: about 58 samples expected, and
	// none with probability e^-58 (3 MB missed one run in a few hundred).
	require.NotEmpty(t, p.Sample, "30 MB allocated, no sample")
	require.Equal(t, int64(8), p.Sample[0].Location[0].Line[0].Line, "the bnew's line")

	out.Reset()
	errb.Reset()
	run([]string{"run", "-h"}, &out, &errb)
	for _, want := range []string{"-jade-cpuprofile", "-jade-heapprofile", "Go-level CPU profile", "Jade-level CPU profile"} {
		require.True(t, strings.Contains(errb.String(), want), "jade run -h lacks %q", want)
	}
}
