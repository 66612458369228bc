package jasm

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
)

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
