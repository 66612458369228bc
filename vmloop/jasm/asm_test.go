package jasm

import (
	"errors"
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
