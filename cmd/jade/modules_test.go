package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestModules: jade run links a program's imports at load (next to it,
// --lib, $JADE_PATH, the built-in std); jade asm -o links them into one
// binary whose traps still name the module's file and line; link and
// verify errors name the module's file.
func TestModules(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "lib")
	envlib := filepath.Join(dir, "envlib")
	for name, src := range map[string]string{
		"app/main.jasm": `.import "std/bytes" as bytes
.import "util" as util
.import "other" as other
.func main(args:ref) -> i64
  .local b:ref, n:i64, i:i64
  ldb     b, "  hi"
  blen    n, b
  call    i, bytes.trim_start, b, 0, n
  call    i, util.at, b, i
  call    i, other.id, i
  ret     i
.end
`,
		"lib/util.jasm": `.func at(b:ref, i:i64) -> i64
  .local v:i64
  bget    v, b, i
  ret     v
.end
`,
		"envlib/other.jasm": ".func id(x:i64) -> i64\n  ret x\n.end\n",
		"app/trap.jasm":     ".import \"../lib/util\" as u\n.func main() -> i64\n  .local b:ref, n:i64\n  const n, 1\n  bnew b, n\n  call n, u.at, b, 7\n  ret n\n.end\n",
		"app/bad.jasm":      ".import \"../lib/bad\" as bad\n.func main()\n  retv\n.end\n",
		"lib/bad.jasm":      ".func f() -> ref\n  .local r:ref\n  ret r\n.end\n",
		"app/badasm.jasm":   ".import \"../lib/badasm\" as bad\n.func main()\n  retv\n.end\n",
		"lib/badasm.jasm":   ".func f()\n  bogus\n.end\n",
	} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	}
	t.Setenv("JADE_PATH", envlib)
	main := filepath.Join(dir, "app", "main.jasm")
	var out, errb bytes.Buffer
	require.Equal(t, exitLoad, run([]string{"run", main}, &out, &errb), "util is on no path")
	require.Contains(t, errb.String(), "main.jasm:2:9: module \"util\" not found")

	out.Reset()
	errb.Reset()
	require.Equal(t, exitSuccess, run([]string{"run", "--lib", lib, main}, &out, &errb), errb.String())
	require.Equal(t, "104\n", out.String()) // 'h'

	// asm -o links everything into one binary, which runs without --lib.
	bin := filepath.Join(dir, "main.jbc")
	require.Equal(t, exitSuccess, run([]string{"asm", "--lib", lib, "-o", bin, main}, &out, &errb), errb.String())
	out.Reset()
	t.Setenv("JADE_PATH", "")
	require.Equal(t, exitSuccess, run([]string{"run", bin}, &out, &errb), errb.String())
	require.Equal(t, "104\n", out.String())

	// A trap in a module names the module's file and line, from source
	// and from the linked binary.
	trapBin := filepath.Join(dir, "trap.jbc")
	require.Equal(t, exitSuccess, run([]string{"asm", "-o", trapBin, filepath.Join(dir, "app", "trap.jasm")}, &out, &errb), errb.String())
	for _, prog := range []string{filepath.Join(dir, "app", "trap.jasm"), trapBin} {
		errb.Reset()
		require.Equal(t, exitTrap, run([]string{"run", prog}, &out, &errb))
		require.Contains(t, errb.String(), filepath.Join("lib", "util.jasm")+":3", prog)
		require.Contains(t, errb.String(), "trap.jasm:6", prog)
	}

	// Verify and assembler errors name the module's file and line.
	errb.Reset()
	require.Equal(t, exitLoad, run([]string{"asm", "--check", filepath.Join(dir, "app", "bad.jasm")}, &out, &errb))
	require.Contains(t, errb.String(), filepath.Join("lib", "bad.jasm")+":3:")
	errb.Reset()
	require.Equal(t, exitLoad, run([]string{"run", filepath.Join(dir, "app", "badasm.jasm")}, &out, &errb))
	require.Contains(t, errb.String(), filepath.Join("lib", "badasm.jasm")+":2:3: unknown mnemonic bogus")
}
