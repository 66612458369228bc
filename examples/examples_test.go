package examples_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestExamples builds the jade command and runs every example, checking
// the last line of stdout and the exit code. JADE_BIN names a jade binary
// to run instead of building one: the platform runs (scripts/windows,
// scripts/arm64) run the test binary where there is no go command, or
// where the go command would build for the wrong machine.
func TestExamples(t *testing.T) {
	bin := os.Getenv("JADE_BIN")
	if bin == "" {
		if _, err := exec.LookPath("go"); err != nil {
			t.Skipf("no go command to build jade with (%v) and JADE_BIN is not set", err)
		}
		bin = filepath.Join(t.TempDir(), "jade")
		if runtime.GOOS == "windows" {
			bin += ".exe"
		}
		out, err := exec.Command("go", "build", "-o", bin, "../cmd/jade").CombinedOutput()
		require.NoError(t, err, "build\n%s", out)
	}
	cases := []struct{ file, want string }{
		{"fib.jasm", "832040"},
		{"fanout.jasm", "49995000"},
		{"throw_join.jasm", "boom"},
		{"cancel.jasm", "Cancelled"},
		{"hog.jasm", "1000000"},
		{"timeout.jasm", "timed out"},
		{"periodic.jasm", "40"},
		{"pipeline.jasm", "50005000"},
	}
	for _, c := range cases {
		for _, workers := range []string{"1", "2", "4", "8"} {
			t.Run(c.file+"/workers="+workers, func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				cmd := exec.Command(bin, "run", "--workers", workers, c.file)
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				require.NoError(t, cmd.Run(), "stderr: %s", stderr.String())
				lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
				if got := lines[len(lines)-1]; got != c.want {
					t.Fatalf("last line %q, want %q (stdout %q)", got, c.want, stdout.String())
				}
			})
		}
	}
}
