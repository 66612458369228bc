package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/feature"
)

func write(t *testing.T, name, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	return p
}

func TestExitCodes(t *testing.T) {
	cases := []struct {
		name, src string
		args      []string
		code      int
		stdout    string
		stderr    string
	}{
		{"success", ".func main(args:ref) -> i64\n .local n:i64\n alen n, args\n ret n\n.end\n", []string{"a", "b"}, exitSuccess, "2\n", ""},
		{"failure", ".func main() -> i64\n .local m:ref, e:ref\n const m, \"bad\"\n newerr e, m\n throw e\n.end\n", nil, exitFailure, "", "uncaught Error: bad"},
		{"trap", ".func main() -> i64\n .local a:i64, b:i64\n const a, 1\n const b, 0\n div a, a, b\n ret a\n.end\n", nil, exitTrap, "", "division by zero"},
		{"asm error", ".func main() -> i64\n  bogus r0\n.end\n", nil, exitLoad, "", ":2:3:"},
		{"verify error", ".func main() -> ref\n .local r:ref\n ret r\n.end\n", nil, exitLoad, "", "main@"},
		{"void main", ".func main()\n retv\n.end\n", nil, exitSuccess, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := write(t, "p.jasm", c.src)
			var out, errb bytes.Buffer
			code := run(append([]string{"run", path}, c.args...), &out, &errb)
			if code != c.code || out.String() != c.stdout || !strings.Contains(errb.String(), c.stderr) {
				t.Fatalf("code %d stdout %q stderr %q; want %d %q %q", code, out.String(), errb.String(), c.code, c.stdout, c.stderr)
			}
		})
	}
	var out, errb bytes.Buffer
	if code := run([]string{"frobnicate"}, &out, &errb); code != exitUsage {
		t.Fatalf("unknown command: %d", code)
	}
	if code := run([]string{"run", "--reductions", "999999999999", write(t, "q.jasm", ".func main()\n retv\n.end\n")}, &out, &errb); code != exitUsage {
		t.Fatalf("reductions above cap: %d (%s)", code, errb.String())
	}
}

func TestAsm(t *testing.T) {
	src := ".func main() -> i64\n .local n:i64\n const n, 5\n ret n\n.end\n"
	path := write(t, "p.jasm", src)
	var out, errb bytes.Buffer
	if code := run([]string{"asm", "--check", path}, &out, &errb); code != 0 || out.Len() != 0 {
		t.Fatalf("check: %d %q %q", code, out.String(), errb.String())
	}
	if code := run([]string{"asm", "--dis", path}, &out, &errb); code != 0 || !strings.Contains(out.String(), ".func main") {
		t.Fatalf("dis: %d %q %q", code, out.String(), errb.String())
	}
	// The disassembly assembles to a program that runs the same, and the
	// binary form runs too.
	dis := write(t, "d.jasm", out.String())
	bin := filepath.Join(t.TempDir(), "p.jbc")
	if code := run([]string{"asm", "-o", bin, dis}, &out, &errb); code != 0 {
		t.Fatalf("asm -o: %d %s", code, errb.String())
	}
	out.Reset()
	if code := run([]string{"run", bin}, &out, &errb); code != 0 || out.String() != "5\n" {
		t.Fatalf("run binary: %d %q %s", code, out.String(), errb.String())
	}
}

// TestInterruptCancels: SIGINT cancels main, which exits with the
// Cancelled code.
func TestInterruptCancels(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("os.Process.Signal cannot send SIGINT on Windows (only Kill)")
	}
	feature.Signals(t)
	bin := jadeBinary(t)
	path := write(t, "w.jasm", ".func main() -> i64\n .local ev:ref, z:i64\n evnew ev\n evwait ev\n const z, 0\n ret z\n.end\n")
	cmd := exec.Command(bin, "run", path)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	require.NoError(t, cmd.Start())
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != exitCancelled {
		t.Fatalf("exit %v, want %d (stderr %s)", err, exitCancelled, errb.String())
	}
}

// TestEngineConfig: --engine-config declares engines and picks the one that
// runs main; its wheel, limits and capabilities apply; bad files are usage
// errors naming the file.
func TestEngineConfig(t *testing.T) {
	prog := write(t, "e.jasm", `.abi 1.1
.func main() -> ref
  .local d:i64, s:ref, t:ref
  const d, 1000000
  intr _, time.sleep, d
  spawn t, child
  const s, "slept"
  ret s
.end
.func child() -> void
  retv
.end
`)
	cases := []struct {
		name, cfg string
		code      int
		stdout    string
		stderr    string
	}{
		{"wheel", `{"main":"t","engines":[{"name":"t","timerWheel":{"tick":"2ms"},"capabilities":["spawn"]}]}`, exitSuccess, "slept\n", ""},
		{"no wheel", `{"main":"t","engines":[{"name":"t"}]}`, exitFailure, "", `engine "t"`},
		{"no spawn", `{"main":"t","engines":[{"name":"t","timerWheel":{},"capabilities":[]}]}`, exitFailure, "", "lacks capability spawn"},
		{"main engine", `{"engines":[{"name":"main","reductionLimit":500}]}`, exitSuccess, "slept\n", ""},
		{"live limit", `{"main":"t","engines":[{"name":"t","timerWheel":{},"limits":{"liveTasks":1}}]}`, exitFailure, "", "ResourceError"},
		{"unknown field", `{"engines":[{"name":"t","bogus":1}]}`, exitUsage, "", `unknown field "bogus"`},
		{"bad policy", `{"engines":[{"name":"t","overrunPolicy":"sometimes"}]}`, exitUsage, "", "overrunPolicy"},
		{"undeclared main", `{"main":"x","engines":[]}`, exitUsage, "", `main engine "x" is not declared`},
		{"bad wheel", `{"main":"t","engines":[{"name":"t","timerWheel":{"slotsPerLevel":3}}]}`, exitUsage, "", "SlotsPerLevel"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := write(t, "engines.json", c.cfg)
			var out, errb bytes.Buffer
			code := run([]string{"run", "--engine-config", cfg, prog}, &out, &errb)
			if code != c.code || out.String() != c.stdout || !strings.Contains(errb.String(), c.stderr) {
				t.Fatalf("code %d stdout %q stderr %q; want %d %q %q", code, out.String(), errb.String(), c.code, c.stdout, c.stderr)
			}
		})
	}
}

// TestTrapExitCode: a Trap exits with 5, not 2, which the Go runtime uses
// for its fatal errors (a crash of the process must not read as a Trap);
// the usage text says so.
func TestTrapExitCode(t *testing.T) {
	path := write(t, "t.jasm", ".func main() -> i64\n .local a:i64, b:i64\n const a, 1\n const b, 0\n div a, a, b\n ret a\n.end\n")
	var out, errb bytes.Buffer
	require.Equal(t, 5, run([]string{"run", path}, &out, &errb), errb.String())
	out.Reset()
	require.Equal(t, exitSuccess, run([]string{"help"}, &out, &errb))
	require.Contains(t, out.String(), "5 trap")
	require.Contains(t, out.String(), "2 is a crash")
}

// TestPerfEchoProcFlags: the hidden child command and --syscalls refuse
// what they do not know before anything runs.
func TestPerfEchoProcFlags(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, exitUsage, run([]string{"echoproc"}, &out, &errb))
	require.Equal(t, exitUsage, run([]string{"echoproc", "serve", "-impl", "c"}, &out, &errb))
	require.Equal(t, exitUsage, run([]string{"perf", "--syscalls", "dtrace", "--scenarios", "yield"}, &out, &errb))
	require.Contains(t, errb.String(), "--syscalls")
	var u bytes.Buffer
	usage(&u)
	require.NotContains(t, u.String(), "echoproc", "the child command stays out of the usage text")
}

// TestFlightFlagTooLarge: --flight with a count the flight recorder cannot
// hold is a usage error that names the flag and the limit, not the Go
// runtime's fatal "out of memory" (exit 2).
func TestFlightFlagTooLarge(t *testing.T) {
	path := write(t, "f.jasm", ".func main()\n retv\n.end\n")
	var out, errb bytes.Buffer
	require.Equal(t, exitUsage, run([]string{"run", "--flight", "1000000000000", path}, &out, &errb), errb.String())
	require.Equal(t, "jade: --flight 1000000000000: the flight recorder keeps at most 1048576 events per worker (40 MiB each)\n", errb.String())
	errb.Reset()
	require.Equal(t, exitSuccess, run([]string{"run", "--flight", "1048576", "--workers", "1", path}, &out, &errb), errb.String())
}
