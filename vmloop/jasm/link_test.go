package jasm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
)

// writeTree writes files (path relative to a new temporary directory →
// text) and returns the directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	return dir
}

// runMain runs main of a verified p to completion on the Go loop (native
// false) and returns the Exec (the caller frees it).
func runMain(t *testing.T, p *vmloop.Program, native bool) *vmloop.Exec {
	t.Helper()
	e, err := vmloop.NewExec(p, p.FuncIndex("main"), nil, vmloop.DefaultLimits, 1)
	require.NoError(t, err)
	e.SetNative(native)
	sig := vmloop.SigPreempted
	for i := 0; i < 10000 && sig == vmloop.SigPreempted; i++ {
		sig = e.Run(1000)
	}
	return e
}

const utilSrc = `.abi 1.0
.func twice(x:i64) -> i64
  add     x, x, x
  ret     x
.end

.func get(b:ref, i:i64) -> i64
  .local v:i64
  bget    v, b, i          ; line 9: traps when i is out of range
  ret     v
.end
`

// TestLinkModules: an import resolves next to the importing file, its
// functions are alias.fn in the program with their own file, a module
// imported twice (a diamond) is linked once, and the program runs.
func TestLinkModules(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"app/main.jasm": `.import "lib/util" as util
.import "lib/more.jasm" as more
.func main() -> i64
  .local r:i64
  call    r, util.twice, 20
  call    r, more.inc, r
  ret     r
.end
`,
		"app/lib/util.jasm": utilSrc,
		"app/lib/more.jasm": `.import "util.jasm" as u
.func inc(x:i64) -> i64
  call    x, u.twice, x
  subi    x, x, 38
  ret     x
.end
`,
	})
	main := filepath.Join(dir, "app", "main.jasm")
	p, err := AssembleFile(main, LinkOptions{NoStd: true})
	require.NoError(t, err)
	mustVerify(t, main, p)
	var names []string
	for i := range p.Funcs {
		names = append(names, p.Funcs[i].Name+"@"+filepath.Base(p.FuncFile(i)))
	}
	require.Equal(t, []string{"main@main.jasm", "util.twice@util.jasm", "util.get@util.jasm", "more.inc@more.jasm"}, names)
	require.Equal(t, "", p.Funcs[0].File)
	require.Equal(t, filepath.Join(dir, "app", "lib", "util.jasm"), p.Funcs[1].File)
	e := runMain(t, p, false)
	defer e.Free()
	require.Equal(t, int64(42), e.Result().Int())

	// The disassembly of a linked program assembles back to the same code
	// (as one file: the module functions keep their dotted names).
	// spawn and tailcall name module functions the same way.
	dir2 := writeTree(t, map[string]string{
		"m.jasm": ".import \"u.jasm\" as u\n.func main() -> i64\n  .local t:ref, r:i64\n  spawn t, u.twice, 4\n  join r, t\n  tailcall u.twice, r\n.end\n",
		"u.jasm": utilSrc,
	})
	sp, err := AssembleFile(filepath.Join(dir2, "m.jasm"), LinkOptions{NoStd: true})
	require.NoError(t, err)
	mustVerify(t, "m.jasm", sp)

	q := mustAssemble(t, "dis.jasm", Disassemble(p))
	for i := range p.Funcs {
		require.Equal(t, p.Funcs[i].Name, q.Funcs[i].Name)
		require.Equal(t, p.Funcs[i].Code, q.Funcs[i].Code)
	}
}

// TestLinkTrapNamesModuleFile: a trap in a module's function names the
// module's file and line, on both loops and after a binary round trip.
func TestLinkTrapNamesModuleFile(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"main.jasm": `.import "util.jasm" as util
.func main() -> i64
  .local b:ref, n:i64, r:i64
  const   n, 4
  bnew    b, n
  call    r, util.get, b, 9
  ret     r
.end
`,
		"util.jasm": utilSrc,
	})
	p, err := AssembleFile(filepath.Join(dir, "main.jasm"), LinkOptions{NoStd: true})
	require.NoError(t, err)
	data, err := p.MarshalBinary()
	require.NoError(t, err)
	q, err := vmloop.UnmarshalProgram(data)
	require.NoError(t, err)
	for _, prog := range []*vmloop.Program{p, q} {
		mustVerify(t, "main.jasm", prog)
		for _, native := range []bool{false, true} {
			e := runMain(t, prog, native)
			ti := e.Trap()
			require.Equal(t, vmloop.TrapBounds, ti.Code, "%v", ti)
			require.Equal(t, filepath.Join(dir, "util.jasm"), ti.File)
			require.Equal(t, 9, ti.Line)
			require.Equal(t, "util.get", ti.Func)
			st := e.TrapStack().String()
			require.Contains(t, st, "util.jasm:9")
			require.Contains(t, st, "main.jasm:6")
			e.Free()
		}
	}
}

// TestLinkPath: an import not found next to the file is looked for in
// each library directory in order, then in the standard library.
func TestLinkPath(t *testing.T) {
	lib1 := writeTree(t, map[string]string{"x/util.jasm": utilSrc})
	lib2 := writeTree(t, map[string]string{"x/util.jasm": "bad", "std/bytes.jasm": utilSrc})
	app := writeTree(t, map[string]string{"main.jasm": `.import "x/util" as u
.import "std/bytes" as bytes
.func main() -> i64
  .local r:i64
  call    r, u.twice, 2
  call    r, bytes.twice, r
  ret     r
.end
`})
	main := filepath.Join(app, "main.jasm")
	p, err := AssembleFile(main, LinkOptions{Path: []string{lib1, lib2}})
	require.NoError(t, err)
	require.Equal(t, filepath.Join(lib1, "x", "util.jasm"), p.FuncFile(1))
	require.Equal(t, filepath.Join(lib2, "std", "bytes.jasm"), p.FuncFile(3), "a library directory comes before the built-in std")
	mustVerify(t, main, p)
	e := runMain(t, p, false)
	require.Equal(t, int64(8), e.Result().Int())
	e.Free()

	// Without the directories: not found, and the error says where it looked.
	_, err = AssembleFile(main, LinkOptions{})
	require.ErrorContains(t, err, "main.jasm:1:9: module \"x/util\" not found (looked for "+filepath.Join(app, "x/util.jasm"))

	// The built-in standard library: std/bytes from package std.
	src := []byte(".import \"std/bytes\" as bytes\n.func main() -> i64\n  .local b:ref, r:i64\n  ldb b, \"a b\"\n" +
		"  call r, bytes.index_byte, b, 0, 3, 0x20\n  ret r\n.end\n")
	p, err = Link(main, src, LinkOptions{Path: []string{lib1}})
	require.NoError(t, err)
	i := p.FuncIndex("bytes.index_byte")
	require.Equal(t, "std/bytes.jasm", p.FuncFile(i))
	mustVerify(t, main, p)
	e = runMain(t, p, false)
	require.Equal(t, int64(1), e.Result().Int())
	e.Free()
	_, err = Link(main, src, LinkOptions{NoStd: true})
	require.ErrorContains(t, err, "module \"std/bytes\" not found")
}

// TestLibPath: --lib directories come before $JADE_PATH.
func TestLibPath(t *testing.T) {
	t.Setenv("JADE_PATH", "/a"+string(os.PathListSeparator)+"/b")
	require.Equal(t, []string{"/x", "/a", "/b"}, LibPath([]string{"/x"}))
}

// TestLinkErrors: cycles, duplicates and bad references are errors at
// file:line:col, naming the other site where there is one.
func TestLinkErrors(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"cycle", map[string]string{
			"main.jasm": ".import \"a.jasm\" as a\n.func main()\n  retv\n.end\n",
			"a.jasm":    ".func f()\n  retv\n.end\n.import \"b.jasm\" as b\n",
			"b.jasm":    "\n.import \"a.jasm\" as a\n",
		}, []string{"b.jasm:2:1: import cycle: a.jasm:4:1 imports b.jasm; b.jasm:2:1 imports a.jasm"}},
		{"self import", map[string]string{
			"main.jasm": ".import \"main.jasm\" as m\n.func main()\n  retv\n.end\n",
		}, []string{"main.jasm:1:1: import cycle: main.jasm:1:1 imports main.jasm"}},
		{"duplicate module name", map[string]string{
			"main.jasm": ".import \"a.jasm\" as a\n.import \"b.jasm\" as a\n.func main()\n  retv\n.end\n",
			"a.jasm":    ".func f()\n  retv\n.end\n",
			"b.jasm":    ".func f()\n  retv\n.end\n",
		}, []string{"main.jasm:2:21: duplicate module name a (first imported at main.jasm:1:1)"}},
		{"duplicate function in a module", map[string]string{
			"main.jasm": ".import \"a.jasm\" as a\n.func main()\n  call _, a.f\n  retv\n.end\n",
			"a.jasm":    ".func f()\n  retv\n.end\n\n.func f()\n  retv\n.end\n",
		}, []string{"a.jasm:5:7: duplicate function a.f (first defined at a.jasm:1:7)"}},
		{"module function against a quoted one", map[string]string{
			"main.jasm": ".import \"a.jasm\" as a\n.func \"a.f\"()\n  retv\n.end\n",
			"a.jasm":    ".func f()\n  retv\n.end\n",
		}, []string{"a.jasm:1:7: duplicate function a.f (first defined at main.jasm:2:7)"}},
		{"unknown module", map[string]string{
			"main.jasm": ".func main()\n  call _, m.f\n  retv\n.end\n",
		}, []string{"main.jasm:2:11: unknown module m in m.f (import it with .import \"path\" as m)"}},
		{"unknown function of a module", map[string]string{
			"main.jasm": ".import \"a.jasm\" as a\n.func main()\n  call _, a.g\n  retv\n.end\n",
			"a.jasm":    ".func f()\n  retv\n.end\n",
		}, []string{"main.jasm:3:11: unknown function a.g (did you mean a.f?)"}},
		{"a module reaches only its own imports", map[string]string{
			"main.jasm": ".import \"a.jasm\" as a\n.import \"b.jasm\" as b\n.func main()\n  retv\n.end\n",
			"a.jasm":    ".func f()\n  call _, b.g\n  retv\n.end\n",
			"b.jasm":    ".func g()\n  retv\n.end\n",
		}, []string{"a.jasm:2:11: unknown module b in b.g"}},
		{"pool index in a module", map[string]string{
			"main.jasm": ".import \"a.jasm\" as a\n.kint 5\n.func main()\n  retv\n.end\n",
			"a.jasm":    ".func f() -> i64\n  .local x:i64\n  ldk x, #0\n  ret x\n.end\n",
		}, []string{"a.jasm:3:10: pool index #0 in an imported module"}},
		{"not found", map[string]string{
			"main.jasm": ".import \"nope\" as n\n.func main()\n  retv\n.end\n",
		}, []string{"main.jasm:1:9: module \"nope\" not found"}},
		{"no name", map[string]string{
			"main.jasm": ".import \"lib/x.jasm\"\n.func main()\n  retv\n.end\n",
		}, []string{"main.jasm:1:9: module import needs a name: .import \"lib/x.jasm\" as name"}},
		{"errors of several files in file order", map[string]string{
			"main.jasm": ".import \"a.jasm\" as a\n.func main()\n  bogus\n  retv\n.end\n",
			"a.jasm":    ".func f()\n  bogus2\n.end\n",
		}, []string{"main.jasm:3:3: unknown mnemonic bogus", "a.jasm:2:3: unknown mnemonic bogus2"}},
		{"ABI majors differ", map[string]string{
			"main.jasm": ".import \"a.jasm\" as a\n.abi 1.0\n.func main()\n  retv\n.end\n",
			"a.jasm":    ".abi 2.0\n.func f()\n  retv\n.end\n",
		}, []string{"a.jasm:1:1: module a.jasm needs ABI 2.0, the program 1.0"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeTree(t, tc.files)
			t.Chdir(dir)
			_, err := AssembleFile("main.jasm", LinkOptions{NoStd: true})
			require.Error(t, err)
			lines := strings.Split(err.Error(), "\n")
			require.Len(t, lines, len(tc.want), "%v", err)
			for i, w := range tc.want {
				require.True(t, strings.HasPrefix(lines[i], w), "got  %s\nwant %s...", lines[i], w)
			}
		})
	}
}

// TestLinkABI: the linked program needs the highest minor version any of
// its files declares.
func TestLinkABI(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"main.jasm": ".abi 1.0\n.import \"a.jasm\" as a\n.func main() -> i64\n  .local r:i64\n  call r, a.f\n  ret r\n.end\n",
		"a.jasm":    ".abi 1.3\n.func f() -> i64\n  .local b:ref, r:i64\n  ldb b, \"xyz\"\n  blen r, b\n  ret r\n.end\n",
	})
	p, err := AssembleFile(filepath.Join(dir, "main.jasm"), LinkOptions{NoStd: true})
	require.NoError(t, err)
	require.Equal(t, vmloop.Version{Major: 1, Minor: 3}, p.ABI)
	require.Zero(t, p.ABILine, "the line of .abi 1.3 is in another file")
	mustVerify(t, "main.jasm", p)
}

// TestAssembleReadsNoFile: Assemble resolves imports only in the built-in
// standard library, so untrusted text cannot make it read a file; Link
// reads only regular files.
func TestAssembleReadsNoFile(t *testing.T) {
	dir := writeTree(t, map[string]string{"util.jasm": utilSrc})
	src := []byte(".import \"util.jasm\" as u\n.import \"std/bytes\" as bytes\n.func main()\n  retv\n.end\n")
	main := filepath.Join(dir, "main.jasm")
	_, err := Assemble(main, src)
	require.ErrorContains(t, err, "main.jasm:1:9: module \"util.jasm\" not found: Assemble reads no file")
	p, err := Link(main, src, LinkOptions{})
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "util.jasm"), p.FuncFile(1))

	_, err = Link(main, []byte(".import \"/dev/zero\" as z\n"), LinkOptions{})
	require.ErrorContains(t, err, "main.jasm:1:9: module \"/dev/zero\": /dev/zero is not a regular file")
}
