package jasm

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
)

func mustAssemble(t *testing.T, name, src string) *vmloop.Program {
	t.Helper()
	p, err := Assemble(name, []byte(src))
	require.NoError(t, err, "Assemble(%s)\nsource:\n%s", name, src)
	return p
}

func mustVerify(t *testing.T, name string, p *vmloop.Program) {
	t.Helper()
	require.NoError(t, vmloop.Verify(p, nil), "Verify(%s)\ndisassembly:\n%s", name, Disassemble(p))
}

func enc(op vmloop.Op, a, b, c uint8, d int32) vmloop.Instr { return vmloop.Encode(op, a, b, c, d) }

// examplePrograms returns the .jasm files of testdata and, when present,
// of the repository's examples directory.
func examplePrograms(t testing.TB) map[string]string {
	out := map[string]string{}
	for _, pat := range []string{"testdata/*.jasm", "../../examples/*.jasm"} {
		files, _ := filepath.Glob(pat)
		for _, f := range files {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			out[f] = string(b)
		}
	}
	require.NotZero(t, len(out), "no example programs found")
	return out
}

func TestProposalFib(t *testing.T) {
	src, err := os.ReadFile("testdata/fib.jasm")
	require.NoError(t, err)
	p := mustAssemble(t, "fib.jasm", string(src))
	mustVerify(t, "fib.jasm", p)
	if p.ABI != (vmloop.Version{Major: 1, Minor: 0}) {
		t.Errorf("ABI = %v", p.ABI)
	}
	fib := p.Funcs[p.FuncIndex("fib")]
	// n=r0 a=r1 b=r2: `call a, fib, a` is already a window, so no moves.
	want := []vmloop.Instr{
		vmloop.EncodeBC(vmloop.JLTI, 0, 2, 7),
		enc(vmloop.SUBI, 1, 0, 0, 1),
		enc(vmloop.CALL, 1, 0, 1, 1),
		enc(vmloop.SUBI, 2, 0, 0, 2),
		enc(vmloop.CALL, 2, 0, 1, 1),
		enc(vmloop.ADD, 1, 1, 2, 0),
		enc(vmloop.RET, 1, 0, 0, 0),
		enc(vmloop.RET, 0, 0, 0, 0),
	}
	if !reflect.DeepEqual(fib.Code, want) {
		t.Errorf("fib code:\n got %v\nwant %v\n%s", fib.Code, want, Disassemble(p))
	}
	if fib.NRegs != 3 {
		t.Errorf("fib NRegs = %d, want 3 (no hidden window needed)", fib.NRegs)
	}
	// main: n=r1 r=r2, hidden window r3.
	main := p.Funcs[p.FuncIndex("main")]
	wantMain := []vmloop.Instr{
		enc(vmloop.LDI, 1, 0, 0, 30),
		enc(vmloop.MOVI, 3, 1, 0, 0),
		enc(vmloop.CALL, 3, 0, 1, 1),
		enc(vmloop.MOVI, 2, 3, 0, 0),
		enc(vmloop.INTR, 2, 0, 1, 0), // void intrinsic on r: window at r
		enc(vmloop.RET, 2, 0, 0, 0),
	}
	if !reflect.DeepEqual(main.Code, wantMain) {
		t.Errorf("main code:\n got %v\nwant %v\n%s", main.Code, wantMain, Disassemble(p))
	}
	if main.NRegs != 4 {
		t.Errorf("main NRegs = %d, want 4", main.NRegs)
	}
	if len(p.Intrinsics) != 1 || p.Intrinsics[0].Name != "io.print_i64" {
		t.Errorf("imports = %v", p.Intrinsics)
	}
	// Debug information.
	if !reflect.DeepEqual(main.RegNames, []string{"args", "n", "r", ""}) {
		t.Errorf("RegNames = %q", main.RegNames)
	}
	if !reflect.DeepEqual(main.RegTypes, []vmloop.Type{vmloop.TRef, vmloop.TI64, vmloop.TI64, vmloop.TVoid}) {
		t.Errorf("RegTypes = %v", main.RegTypes)
	}
	if !reflect.DeepEqual(main.Lines, []int32{5, 6, 6, 6, 7, 8}) {
		t.Errorf("Lines = %v", main.Lines)
	}
	if !reflect.DeepEqual(fib.Labels, map[int]string{7: "base"}) {
		t.Errorf("Labels = %v", fib.Labels)
	}
}

func TestProposalOutcome(t *testing.T) {
	src, err := os.ReadFile("testdata/outcome.jasm")
	require.NoError(t, err)
	p := mustAssemble(t, "outcome.jasm", string(src))
	mustVerify(t, "outcome.jasm", p)
	main := p.Funcs[0]
	require.Len(t, main.Handlers, 1, "handlers = %v", main.Handlers)
	// seven=r6, window r7: ldi; movi; spawn; movr t; outcome; joini (pc 5); ret; errmsg (pc 7)
	if h := main.Handlers[0]; h != (vmloop.Handler{Start: 5, End: 6, Target: 7, Reg: 3}) {
		t.Errorf("handler = %+v", h)
	}
	if op := main.Code[5].Op(); op != vmloop.JOINI {
		t.Errorf("join v, t lowered to %v, want joini", op)
	}
	if main.Code[2] != enc(vmloop.SPAWN, 7, 0, 1, 1) {
		t.Errorf("spawn = %v", main.Code[2])
	}
	if p.KStr[0] != "boom" {
		t.Errorf("KStr = %q", p.KStr)
	}
}

func TestExamplesVerify(t *testing.T) {
	for name, src := range examplePrograms(t) {
		p := mustAssemble(t, name, src)
		mustVerify(t, name, p)
	}
}

// same asserts that two sources assemble to the same code, frames and
// pools: the friendly form and its documented lowering.
func same(t *testing.T, friendly, raw string) {
	t.Helper()
	p := mustAssemble(t, "friendly", friendly)
	q := mustAssemble(t, "raw", raw)
	if d := diffPrograms(p, q); d != "" {
		t.Errorf("%s\nfriendly:\n%s\nraw:\n%s", d, Disassemble(p), Disassemble(q))
	}
}

func TestFriendlyForms(t *testing.T) {
	cases := []struct{ name, friendly, raw string }{
		{"mov picks by type", `
.func f(a:i64, b:f64, c:ref) -> i64
  .local x:i64, y:f64, z:ref
  mov x, a
  mov y, b
  mov z, c
  mov r3, a      ; raw destination: the source's type decides
  ret x
.end`, `
.func f(a:i64, b:f64, c:ref) -> i64
  .local x:i64, y:f64, z:ref
  movi x, a
  movf y, b
  movr z, c
  movi r3, a
  ret x
.end`},
		{"const picks by literal and type", `
.func f() -> i64
  .local i:i64, g:f64, s:ref
  const i, 30
  const i, -2147483648
  const i, 2147483648
  const i, 0x7fffffffffffffff
  const g, 1.5
  const g, 3
  const g, inf
  const s, "hi"
  const r3, 7
  const r4, 2.5
  const r5, "x"
  ret i
.end`, `
.func f() -> i64
  .local i:i64, g:f64, s:ref
  .regs 6
  ldi i, 30
  ldi i, -2147483648
  ldk i, 2147483648
  ldk i, 0x7fffffffffffffff
  ldf g, 1.5
  ldf g, 3.0
  ldf g, inf
  lds s, "hi"
  ldi r3, 7
  ldf r4, 2.5
  lds r5, "x"
  ret i
.end`},
		{"call with moves and literal args", `
.func g(a:i64, b:f64) -> f64
  ret b
.end
.func f(x:i64) -> f64
  .local y:f64
  call y, g, x, 2
  call _, g, 7, y
  ret y
.end`, `
.func g(a:i64, b:f64) -> f64
  ret b
.end
.func f(x:i64) -> f64
  .local y:f64
  .regs 4
  movi r2, x
  ldf r3, 2.0
  call (r2, 2), g
  movf y, r2
  ldi r2, 7
  movf r3, y
  call (r2, 2), g
  ret y
.end`},
		{"call already a window", `
.func g(a:i64, b:i64) -> i64
  ret a
.end
.func f(x:i64, y:i64) -> i64
  call x, g, x, y
  ret x
.end`, `
.func g(a:i64, b:i64) -> i64
  ret a
.end
.func f(x:i64, y:i64) -> i64
  call (x, 2), g
  ret x
.end`},
		{"call with no arguments uses the hidden window", `
.func g() -> i64
  .local z:i64
  const z, 1
  ret z
.end
.func f() -> i64
  .local x:i64
  call x, g
  ret x
.end`, `
.func g() -> i64
  .local z:i64
  const z, 1
  ret z
.end
.func f() -> i64
  .local x:i64
  .regs 2
  call (r1, 0), g
  movi x, r1
  ret x
.end`},
		{"spawn and join", `
.func w(x:i64) -> f64
  .local y:f64
  itof y, x
  ret y
.end
.func f(n:i64) -> f64
  .local t:ref, v:f64
  spawn t, w, n
  join v, t
  join _, t
  ret v
.end`, `
.func w(x:i64) -> f64
  .local y:f64
  itof y, x
  ret y
.end
.func f(n:i64) -> f64
  .local t:ref, v:f64
  .regs 4
  movi r3, n
  spawn (r3, 1), w
  movr t, r3
  joinf v, t
  joinv t
  ret v
.end`},
		{"spawn with the handle as the window", `
.func w() -> i64
  .local z:i64
  const z, 0
  ret z
.end
.func f() -> i64
  .local t:ref, v:i64
  spawn t, w
  join v, t
  ret v
.end`, `
.func w() -> i64
  .local z:i64
  const z, 0
  ret z
.end
.func f() -> i64
  .local t:ref, v:i64
  spawn (t, 0), w
  joini v, t
  ret v
.end`},
		{"intr forms", `
.func f(s:ref, n:i64) -> i64
  .local id:i64
  intr _, io.print_str, s
  intr _, io.print_i64, 42
  intr id, task.id
  intr n, task.id
  intr _, host.log, s, n       ; unknown result: never the argument window
  intr r5, host.get, r5
  ret id
.end`, `
.func f(s:ref, n:i64) -> i64
  .local id:i64
  .regs 6
  intr (s, 1), io.print_str
  ldi r6, 42
  intr (r6, 1), io.print_i64
  intr (id, 0), task.id
  intr (n, 0), task.id
  movr r6, s
  movi r7, n
  intr (r6, 2), host.log
  intr (r5, 1), host.get
  ret id
.end`},
		{"intr of a host intrinsic with moves", `
.func f(s:ref, n:i64) -> i64
  .local k:i64
  intr k, host.len, s
  intr _, host.log, n, s
  ret k
.end`, `
.func f(s:ref, n:i64) -> i64
  .local k:i64
  .regs 5
  movr r3, s
  intr (r3, 1), host.len
  movi k, r3
  movi r3, n
  movr r4, s
  intr (r3, 2), host.log
  ret k
.end`},
		{"tailcall", `
.func g(a:i64, b:i64) -> i64
  ret a
.end
.func h() -> i64
  .local z:i64
  const z, 0
  ret z
.end
.func f(x:i64, y:i64) -> i64
  jz x, swap
  jz y, none
  tailcall g, x, y
swap:
  tailcall g, y, x
none:
  tailcall h
.end`, `
.func g(a:i64, b:i64) -> i64
  ret a
.end
.func h() -> i64
  .local z:i64
  const z, 0
  ret z
.end
.func f(x:i64, y:i64) -> i64
  .regs 4
  jz x, swap
  jz y, none
  tailcall (x, 2), g
swap:
  movi r2, y
  movi r3, x
  tailcall (r2, 2), g
none:
  tailcall (r0, 0), h
.end`},
		{"ret without a value", `
.func f()
  ret
.end`, `
.func f() -> void
  retv
.end`},
		{"pool index syntax and directives", `
.kint 5, 5
.kstr "a"
.func f() -> i64
  .local i:i64, s:ref
  ldk i, #1
  ldk i, 5
  lds s, "a"
  lds s, "b"
  ret i
.end`, `
.kint 5
.kint 5
.kstr "a", "b"
.func f() -> i64
  .local i:i64, s:ref
  ldk i, #1
  ldk i, #0
  lds s, #0
  lds s, #1
  ret i
.end`},
		{"imports dedupe and quoted names", `
.func f(n:i64)
  intr _, io.print_i64, n
  intr _, io.print_i64, n
  intr _, "io.print_i64", n
  retv
.end`, `
.import io.print_i64
.func f(n:i64)
  intr (n, 1), #0
  intr (n, 1), io.print_i64
  intr (n, 1), io.print_i64
  retv
.end`},
		{"raw registers grow the frame", `
.func f(a:i64) -> i64
  movi r9, a
  ret r9
.end`, `
.func f(a:i64) -> i64
  .regs 10
  movi r9, a
  ret r9
.end`},
		{"labels on one line and at the end", `
.func f(a:i64) -> i64
top: again: jz a, top
  .try x, y, h, r1
x: subi a, a, 1
y: ret a
h: ret a
.end`, `
.func f(a:i64) -> i64
  .regs 2
  .try x, y, h, r1
top:
  jz a, top
x:
  subi a, a, 1
y:
  ret a
h:
  ret a
.end`},
		{"unnamed parameters and elem types", `
.func f(i64, ref) -> ref
  .local a:ref
  anew a, r0, ref
  anew a, r0, i64
  anew a, r0, f64
  ret a
.end`, `
.func f(i64, ref) -> ref
  .local a:ref
  anew a, r0, 3
  anew a, r0, 1
  anew a, r0, 2
  ret a
.end`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { same(t, c.friendly, c.raw) })
	}
}

func TestLiterals(t *testing.T) {
	p := mustAssemble(t, "lit", `
.func f() -> i64
  .local i:i64, g:f64, s:ref
  const i, 0xffffffffffffffff   ; hex literals may use all 64 bits
  const i, -0x10
  const i, 0b101
  const i, 0o17
  const i, 9223372036854775807
  const i, -9223372036854775808
  const g, 1e3
  const g, -2.5e-3
  const g, nan
  const g, -inf
  const g, +inf
  const g, 0x1p-2
  const g, f64bits(0x7ff0000000000001)
  const g, -0.0
  const s, "a\nb\tc\\d\"e\x41\x00\r\0 ; not a comment"
  const s, "héllo"
  ret i
.end`)
	code := p.Funcs[0].Code
	ldi := func(pc int) int32 {
		require.Equal(t, vmloop.LDI, code[pc].Op(), "pc %d: %v, want ldi", pc, code[pc].Op())
		return code[pc].D()
	}
	if ldi(0) != -1 || ldi(1) != -16 || ldi(2) != 5 || ldi(3) != 15 {
		t.Errorf("ints: %v", code[:4])
	}
	if !reflect.DeepEqual(p.KInt, []int64{math.MaxInt64, math.MinInt64}) {
		t.Errorf("KInt = %v", p.KInt)
	}
	wantF := []uint64{
		math.Float64bits(1000), math.Float64bits(-2.5e-3), math.Float64bits(math.NaN()),
		math.Float64bits(math.Inf(-1)), math.Float64bits(math.Inf(1)), math.Float64bits(0.25),
		0x7ff0000000000001, math.Float64bits(math.Copysign(0, -1)),
	}
	var gotF []uint64
	for _, f := range p.KFlt {
		gotF = append(gotF, math.Float64bits(f))
	}
	if !reflect.DeepEqual(gotF, wantF) {
		t.Errorf("KFlt bits = %x, want %x", gotF, wantF)
	}
	wantS := []string{"a\nb\tc\\d\"eA\x00\r\x00 ; not a comment", "héllo"}
	if !reflect.DeepEqual(p.KStr, wantS) {
		t.Errorf("KStr = %q, want %q", p.KStr, wantS)
	}
}

func TestABI(t *testing.T) {
	p := mustAssemble(t, "a", ".func f()\n retv\n.end\n")
	if p.ABI != vmloop.ABI {
		t.Errorf("default ABI = %v, want %v", p.ABI, vmloop.ABI)
	}
	p = mustAssemble(t, "a", ".abi 1.12\n.func f()\n retv\n.end\n")
	if p.ABI != (vmloop.Version{Major: 1, Minor: 12}) {
		t.Errorf("ABI = %v", p.ABI)
	}
}

func TestImmediateForms(t *testing.T) {
	p := mustAssemble(t, "imm", `
.func f(a:i64) -> i64
  jlti a, -32768, out
  jgei a, 32767, out
  addi a, a, -2147483648
  ldi a, 2147483647
out:
  ret a
.end`)
	c := p.Funcs[0].Code
	if c[0].BC() != -32768 || c[1].BC() != 32767 || c[2].D() != math.MinInt32 || c[3].D() != math.MaxInt32 {
		t.Errorf("immediates: %v", c)
	}
	if c[0].D() != 4 || c[1].D() != 4 {
		t.Errorf("targets: %d %d", c[0].D(), c[1].D())
	}
}

func TestOperandFields(t *testing.T) {
	p := mustAssemble(t, "fields", `
.func f(b:ref, c:ref) -> i64
  .local i:i64, j:i64, k:i64
  bcopy b, i, c, j, k
  bslice c, b, i, j
  bfind k, b, c, j
  ret k
.end`)
	c := p.Funcs[0].Code
	if c[0] != enc(vmloop.BCOPY, 0, 2, 1, vmloop.EncodeD01(3, 4)) {
		t.Errorf("bcopy = %#x", uint64(c[0]))
	}
	if c[1] != enc(vmloop.BSLICE, 1, 0, 2, vmloop.EncodeD01(3, 0)) {
		t.Errorf("bslice = %#x", uint64(c[1]))
	}
	if c[2] != enc(vmloop.BFIND, 4, 0, 1, vmloop.EncodeD01(3, 0)) {
		t.Errorf("bfind = %#x", uint64(c[2]))
	}
}

func TestEveryOpcodeAssembles(t *testing.T) {
	// One instruction per opcode, written from the ISA table with raw
	// registers, must assemble to exactly that opcode.
	for i := 0; i < vmloop.NumOps; i++ {
		op := vmloop.Op(i)
		info, ok := op.Info()
		if !ok {
			continue
		}
		var ops []string
		for _, od := range info.Operands {
			switch od.Kind {
			case vmloop.ODst, vmloop.OSrc, vmloop.OSrcDst:
				ops = append(ops, "r1")
			case vmloop.OImm:
				ops = append(ops, "3")
			case vmloop.OTarget:
				ops = append(ops, "end")
			case vmloop.OConstI:
				ops = append(ops, "12345678912")
			case vmloop.OConstF:
				ops = append(ops, "1.5")
			case vmloop.OConstS:
				ops = append(ops, `"s"`)
			case vmloop.OConstB:
				ops = append(ops, `"b\r\n"`)
			case vmloop.OFunc:
				ops = append(ops, "f")
			case vmloop.OIntr:
				ops = append(ops, "io.print_i64")
			case vmloop.OWindow:
				ops = append(ops, "(r1, 1)")
			case vmloop.OElemType:
				ops = append(ops, "i64")
			}
		}
		res := "-> i64"
		if op == vmloop.RETV {
			res = ""
		}
		src := ".func f(i64, i64) " + res + "\n  " + info.Name + " " + strings.Join(ops, ", ") + "\nend:\n  .word 0\n.end\n"
		p, err := Assemble("op.jasm", []byte(src))
		if err != nil {
			t.Errorf("%s: %v\n%s", info.Name, err, src)
			continue
		}
		if got := p.Funcs[0].Code[0].Op(); got != op {
			t.Errorf("%s assembled to %v", info.Name, got)
		}
	}
}

func TestErrorType(t *testing.T) {
	_, err := Assemble("x.jasm", []byte(".func f()\n  bogus\n.end\n"))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T is not an *Error list", err)
	}
	if e.File != "x.jasm" || e.Line != 2 || e.Col != 3 {
		t.Errorf("error = %+v", e)
	}
	var l ErrorList
	if !errors.As(err, &l) || len(l) != 1 {
		t.Errorf("ErrorList = %v", l)
	}
	if got := err.Error(); got != "x.jasm:2:3: unknown mnemonic bogus" {
		t.Errorf("Error() = %q", got)
	}
}

func TestErrorLimit(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(".func f()\n")
	for i := 0; i < 30; i++ {
		sb.WriteString("  bogus\n")
	}
	sb.WriteString("  retv\n.end\n")
	_, err := Assemble("x", []byte(sb.String()))
	var l ErrorList
	if !errors.As(err, &l) {
		t.Fatal(err)
	}
	if len(l) != maxErrors+1 || l[maxErrors].Msg != "too many errors" {
		t.Errorf("got %d errors, last %q", len(l), l[len(l)-1].Msg)
	}
}
