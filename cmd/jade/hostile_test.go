package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/native"
)

// hostileExpect is what a program of testdata/hostile expects, from its
// header comments:
//
//	; expect-exit: N        the exit code of jade run (required)
//	; expect-stdout: TEXT   stdout contains TEXT (repeatable)
//	; expect-stderr: TEXT   stderr contains TEXT (repeatable)
//	; expect-not: TEXT      neither stdout nor stderr contains TEXT
//	; expect-env: NAME=VAL  run with the environment variable set (repeatable)
type hostileExpect struct {
	exit                     int
	stdout, stderr, not, env []string
}

func readExpect(t *testing.T, path string) hostileExpect {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	e := hostileExpect{exit: -1}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "; expect-")
		if !ok {
			continue
		}
		key, val, ok := strings.Cut(line, ": ")
		require.True(t, ok, "%s: malformed expectation %q", path, sc.Text())
		switch key {
		case "exit":
			e.exit, err = strconv.Atoi(val)
			require.NoError(t, err, "%s: expect-exit", path)
		case "stdout":
			e.stdout = append(e.stdout, val)
		case "stderr":
			e.stderr = append(e.stderr, val)
		case "not":
			e.not = append(e.not, val)
		case "env":
			require.Contains(t, val, "=", "%s: expect-env wants NAME=VALUE", path)
			e.env = append(e.env, val)
		default:
			t.Fatalf("%s: unknown expectation %q", path, key)
		}
	}
	require.NoError(t, sc.Err())
	require.GreaterOrEqual(t, e.exit, 0, "%s: no expect-exit line", path)
	return e
}

// TestHostilePrograms runs every program of testdata/hostile (one per
// defect of issue #18: a host crash on deep nesting, time arithmetic that
// wrapped, host addresses in error texts, a joiner trapped by its child's
// result, the Trap exit code) through jade run, on the cgo loop (when this
// build has it) and on the Go loop, and checks the exit code and the
// messages its header expects.
func TestHostilePrograms(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "hostile", "*.jasm"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	loops := []struct {
		name  string
		flags []string
	}{{"cgo-loop", nil}, {"go-loop", []string{"--go-loop"}}}
	for _, path := range paths {
		want := readExpect(t, path)
		for _, loop := range loops {
			t.Run(filepath.Base(path)+"/"+loop.name, func(t *testing.T) {
				if loop.flags == nil && !native.Enabled() {
					t.Skip("no cgo loop in this build (CGO_ENABLED=0, -tags purego or JADE_NATIVE=0)")
				}
				for _, kv := range want.env {
					k, v, _ := strings.Cut(kv, "=")
					if k == "JADE_POLLER" && runtime.GOOS != "linux" {
						t.Skip("JADE_POLLER chooses between the Linux backends; elsewhere nothing reads it")
					}
					t.Setenv(k, v)
				}
				var out, errb bytes.Buffer
				// Slashes on every OS: the expected messages name the file so.
				args := append(append([]string{"run"}, loop.flags...), filepath.ToSlash(path))
				code := run(args, &out, &errb)
				// Deep results print millions of brackets: show the ends.
				show := func(s string) string {
					if len(s) > 400 {
						return s[:200] + " ... " + s[len(s)-200:]
					}
					return s
				}
				require.Equal(t, want.exit, code, "stdout %s\nstderr %s", show(out.String()), show(errb.String()))
				for _, s := range want.stdout {
					require.True(t, strings.Contains(out.String(), s), "stdout %q lacks %q", show(out.String()), s)
				}
				for _, s := range want.stderr {
					require.True(t, strings.Contains(errb.String(), s), "stderr %q lacks %q", show(errb.String()), s)
				}
				for _, s := range want.not {
					require.False(t, strings.Contains(out.String()+errb.String(), s), "output contains %q: %s %s", s, show(out.String()), show(errb.String()))
				}
			})
		}
	}
}
