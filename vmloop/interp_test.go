package vmloop

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	minI64 = math.MinInt64
	maxI64 = math.MaxInt64
)

// TestIntOps covers every i64 register-register opcode, with the edge
// cases of wrapping, division, remainder signs and shift masking.
func TestIntOps(t *testing.T) {
	cases := []struct {
		op   string
		x, y int64
		want int64
		trap TrapCode
	}{
		{"add", 2, 3, 5, 0},
		{"add", maxI64, 1, minI64, 0},
		{"sub", 2, 3, -1, 0},
		{"sub", minI64, 1, maxI64, 0},
		{"mul", -4, 3, -12, 0},
		{"mul", maxI64, 2, -2, 0},
		{"div", 7, 2, 3, 0},
		{"div", -7, 2, -3, 0},
		{"div", 7, -2, -3, 0},
		{"div", minI64, 1, minI64, 0},
		{"div", 7, 0, 0, TrapDivZero},
		{"div", minI64, -1, 0, TrapOverflow},
		{"rem", 7, 3, 1, 0},
		{"rem", -7, 3, -1, 0},
		{"rem", 7, -3, 1, 0},
		{"rem", -7, -3, -1, 0},
		{"rem", minI64, 1, 0, 0},
		{"rem", 7, 0, 0, TrapDivZero},
		{"rem", minI64, -1, 0, TrapOverflow},
		{"and", 0b1100, 0b1010, 0b1000, 0},
		{"or", 0b1100, 0b1010, 0b1110, 0},
		{"xor", 0b1100, 0b1010, 0b0110, 0},
		{"shl", 1, 3, 8, 0},
		{"shl", 1, 64, 1, 0},
		{"shl", 1, 65, 2, 0},
		{"shl", 1, -1, minI64, 0},
		{"shr", -1, 60, 15, 0},
		{"shr", -8, 64, -8, 0},
		{"shr", -8, 65, maxI64 - 3, 0},
		{"shr", minI64, -1, 1, 0},
		{"sar", -8, 1, -4, 0},
		{"sar", -8, 64, -8, 0},
		{"sar", -8, 65, -4, 0},
		{"sar", minI64, -1, -1, 0},
		{"eq", 3, 3, 1, 0},
		{"eq", 3, 4, 0, 0},
		{"ne", 3, 4, 1, 0},
		{"ne", 3, 3, 0, 0},
		{"lt", -1, 0, 1, 0},
		{"lt", 0, 0, 0, 0},
		{"le", 0, 0, 1, 0},
		{"le", 1, 0, 0, 0},
		{"gt", 1, 0, 1, 0},
		{"gt", minI64, maxI64, 0, 0},
		{"ge", 0, 0, 1, 0},
		{"ge", -1, 0, 0, 0},
	}
	progs := map[string]*Program{}
	for _, c := range cases {
		p := progs[c.op]
		if p == nil {
			p = itProg(t, nil, itFn("f", "(i64,i64)->i64", 3, c.op+" r2, r0, r1; ret r2"))
			progs[c.op] = p
		}
		sig, e := itCall(t, p, "f", I64(c.x), I64(c.y))
		if c.trap != 0 {
			if sig != SigTrapped || e.Trap().Code != c.trap {
				t.Errorf("%s %d, %d: got %v %v, want trap %v", c.op, c.x, c.y, sig, e.Trap(), c.trap)
			} else if tr := e.Trap(); tr.Func != "f" || tr.PC != 0 {
				t.Errorf("%s %d, %d: trap at %s@%d, want f@0", c.op, c.x, c.y, tr.Func, tr.PC)
			}
			continue
		}
		if sig != SigCompleted || e.Result().Int() != c.want {
			t.Errorf("%s %d, %d = %v %v, want %d", c.op, c.x, c.y, sig, e.Result(), c.want)
		}
	}
}

// TestIntImmediateOps covers the immediate forms and the unary opcodes.
func TestIntImmediateOps(t *testing.T) {
	cases := []struct {
		body string
		x    int64
		want int64
	}{
		{"addi r1, r0, 5", 2, 7},
		{"addi r1, r0, -5", minI64, maxI64 - 4},
		{"subi r1, r0, 5", 2, -3},
		{"muli r1, r0, -3", 5, -15},
		{"andi r1, r0, 6", 13, 4},
		{"andi r1, r0, -1", -9, -9},
		{"shli r1, r0, 4", 3, 48},
		{"shli r1, r0, 65", 3, 6},
		{"shri r1, r0, 1", -2, maxI64},
		{"shri r1, r0, 64", -2, -2},
		{"sari r1, r0, 1", -2, -1},
		{"sari r1, r0, -1", minI64, -1},
		{"neg r1, r0", 5, -5},
		{"neg r1, r0", minI64, minI64},
		{"movi r1, r0", 42, 42},
		{"ldi r1, -123456", 0, -123456},
		{"ldk r1, 0", 0, 1 << 40},
		{"ldk r1, 1", 0, minI64},
		{"nop; movi r1, r0", 9, 9},
	}
	for _, c := range cases {
		p := itProg(t, &Program{KInt: []int64{1 << 40, minI64}}, itFn("f", "(i64)->i64", 2, c.body+"; ret r1"))
		sig, e := itCall(t, p, "f", I64(c.x))
		if sig != SigCompleted || e.Result().Int() != c.want {
			t.Errorf("%s with %d = %v %v, want %d", c.body, c.x, sig, e.Result(), c.want)
		}
	}
}

// TestFloatOps covers the f64 opcodes, NaN comparisons and the saturating
// ftoi.
func TestFloatOps(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	ff := func(op string, x, y, want float64) {
		t.Helper()
		p := itProg(t, nil, itFn("f", "(f64,f64)->f64", 3, op+" r2, r0, r1; ret r2"))
		sig, e := itCall(t, p, "f", F64(x), F64(y))
		got := e.Result().Float()
		if sig != SigCompleted || !(got == want || math.IsNaN(got) && math.IsNaN(want)) {
			t.Errorf("%s %v, %v = %v %v, want %v", op, x, y, sig, e.Result(), want)
		}
	}
	ff("fadd", 1.5, 2.25, 3.75)
	ff("fsub", 1.5, 2.25, -0.75)
	ff("fmul", 1.5, -2, -3)
	ff("fdiv", 1, 4, 0.25)
	ff("fdiv", 1, 0, inf)
	ff("fdiv", -1, 0, -inf)
	ff("fdiv", 0, 0, nan)
	ff("fadd", inf, -inf, nan)

	fu := func(op string, x, want float64) {
		t.Helper()
		p := itProg(t, nil, itFn("f", "(f64)->f64", 2, op+" r1, r0; ret r1"))
		sig, e := itCall(t, p, "f", F64(x))
		got := e.Result().Float()
		if sig != SigCompleted || !(got == want || math.IsNaN(got) && math.IsNaN(want)) {
			t.Errorf("%s %v = %v %v, want %v", op, x, sig, e.Result(), want)
		}
	}
	fu("fneg", 2, -2)
	fu("fneg", 0, math.Copysign(0, -1))
	fu("fsqrt", 9, 3)
	fu("fsqrt", -1, nan)
	fu("movf", 2.5, 2.5)

	fc := func(op string, x, y float64, want int64) {
		t.Helper()
		p := itProg(t, nil, itFn("f", "(f64,f64)->i64", 3, op+" r2, r0, r1; ret r2"))
		sig, e := itCall(t, p, "f", F64(x), F64(y))
		if sig != SigCompleted || e.Result().Int() != want {
			t.Errorf("%s %v, %v = %v %v, want %d", op, x, y, sig, e.Result(), want)
		}
	}
	fc("flt", 1, 2, 1)
	fc("flt", 2, 2, 0)
	fc("flt", nan, 2, 0)
	fc("flt", 2, nan, 0)
	fc("fle", 2, 2, 1)
	fc("fle", nan, nan, 0)
	fc("feq", 2, 2, 1)
	fc("feq", nan, nan, 0)
	fc("feq", 0, math.Copysign(0, -1), 1)

	ftoi := itProg(t, nil, itFn("f", "(f64)->i64", 2, "ftoi r1, r0; ret r1"))
	for _, c := range []struct {
		x    float64
		want int64
	}{
		{2.9, 2}, {-2.9, -2}, {nan, 0}, {inf, maxI64}, {-inf, minI64},
		{1e300, maxI64}, {-1e300, minI64}, {0x1p63, maxI64}, {-0x1p63, minI64},
		{0x1p62, 1 << 62}, {math.Nextafter(0x1p63, 0), 0x7ffffffffffffc00},
	} {
		sig, e := itCall(t, ftoi, "f", F64(c.x))
		if sig != SigCompleted || e.Result().Int() != c.want {
			t.Errorf("ftoi %v = %v %v, want %d", c.x, sig, e.Result(), c.want)
		}
	}
	itof := itProg(t, nil, itFn("f", "(i64)->f64", 2, "itof r1, r0; ret r1"))
	for _, c := range []struct {
		x    int64
		want float64
	}{{3, 3}, {-3, -3}, {maxI64, 0x1p63}, {1<<53 + 1, 1 << 53}} {
		sig, e := itCall(t, itof, "f", I64(c.x))
		if sig != SigCompleted || e.Result().Float() != c.want {
			t.Errorf("itof %d = %v %v, want %v", c.x, sig, e.Result(), c.want)
		}
	}
	ldf := itProg(t, &Program{KFlt: []float64{0.5, -7.25}}, itFn("f", "()->f64", 1, "ldf r0, 1; ret r0"))
	if sig, e := itCall(t, ldf, "f"); sig != SigCompleted || e.Result().Float() != -7.25 {
		t.Errorf("ldf = %v %v", sig, e.Result())
	}
}

// TestBranches covers every conditional branch, taken and not taken.
func TestBranches(t *testing.T) {
	cases := []struct {
		br   string // "jeq r0, r1" or "jeqi r0, 5"
		x, y int64
		want int64
	}{
		{"jz r0", 0, 0, 1}, {"jz r0", 3, 0, 0},
		{"jnz r0", 3, 0, 1}, {"jnz r0", 0, 0, 0},
		{"jeq r0, r1", 3, 3, 1}, {"jeq r0, r1", 3, 4, 0},
		{"jne r0, r1", 3, 4, 1}, {"jne r0, r1", 3, 3, 0},
		{"jlt r0, r1", -1, 0, 1}, {"jlt r0, r1", 0, 0, 0},
		{"jle r0, r1", 0, 0, 1}, {"jle r0, r1", 1, 0, 0},
		{"jgt r0, r1", 1, 0, 1}, {"jgt r0, r1", 0, 0, 0},
		{"jge r0, r1", 0, 0, 1}, {"jge r0, r1", -1, 0, 0},
		{"jeqi r0, -5", -5, 0, 1}, {"jeqi r0, -5", 5, 0, 0},
		{"jnei r0, 7", 6, 0, 1}, {"jnei r0, 7", 7, 0, 0},
		{"jlti r0, 2", 1, 0, 1}, {"jlti r0, 2", 2, 0, 0},
		{"jlei r0, 2", 2, 0, 1}, {"jlei r0, 2", 3, 0, 0},
		{"jgti r0, -300", -299, 0, 1}, {"jgti r0, -300", -300, 0, 0},
		{"jgei r0, 32767", 32767, 0, 1}, {"jgei r0, -32768", minI64, 0, 0},
	}
	for _, c := range cases {
		body := c.br + ", yes; ldi r2, 0; ret r2; yes: ldi r2, 1; ret r2"
		p := itProg(t, nil, itFn("f", "(i64,i64)->i64", 3, body))
		sig, e := itCall(t, p, "f", I64(c.x), I64(c.y))
		if sig != SigCompleted || e.Result().Int() != c.want {
			t.Errorf("%s with %d, %d = %v %v, want %d", c.br, c.x, c.y, sig, e.Result(), c.want)
		}
	}
	// jmp, forward and backward: sum 1..10
	p := itProg(t, nil, itFn("f", "()->i64", 3, `
		ldi r0, 0; ldi r1, 10
		jmp test
	loop:
		add r0, r0, r1
		subi r1, r1, 1
	test:
		jgti r1, 0, loop
		ret r0`))
	if sig, e := itCall(t, p, "f"); sig != SigCompleted || e.Result().Int() != 55 {
		t.Errorf("sum loop = %v %v", sig, e.Result())
	}
}

// itFib is fib(n) in the window calling convention; self is its index.
func itFib(self int) Function {
	return itFn("fib", "(i64)->i64", 3, fmt.Sprintf(`
		jlti r0, 2, base
		subi r1, r0, 1
		call r1, 1, %d
		subi r2, r0, 2
		call r2, 1, %d
		add r1, r1, r2
		ret r1
	base:
		ret r0`, self, self))
}

func fibGo(n int64) int64 {
	if n < 2 {
		return n
	}
	return fibGo(n-1) + fibGo(n-2)
}

// TestCalls covers call, ret, retv and tailcall, with preemption at calls.
func TestCalls(t *testing.T) {
	p := itProg(t, nil, itFib(0))
	for _, n := range []int64{0, 1, 2, 10, 20} {
		sig, e := itCall(t, p, "fib", I64(n))
		if sig != SigCompleted || e.Result().Int() != fibGo(n) {
			t.Errorf("fib(%d) = %v %v, want %d", n, sig, e.Result(), fibGo(n))
		}
	}
	// Tiny budgets: the result is the same whatever the slicing.
	for _, budget := range []int64{1, 2, 3, 7} {
		e := itStart(t, p, "fib", I64(15))
		slices := 0
		for {
			sig := e.Run(budget)
			if sig != SigPreempted {
				if sig != SigCompleted || e.Result().Int() != 610 {
					t.Fatalf("budget %d: %v %v", budget, sig, e.Result())
				}
				break
			}
			slices++
		}
		if slices < int(e.Reductions())/int(budget+8) {
			t.Errorf("budget %d: only %d slices for %d reductions", budget, slices, e.Reductions())
		}
	}

	// tailcall: sum(n, acc) in constant frame depth; void calls and retv;
	// a call whose window is above every live register.
	p = itProg(t, nil,
		itFn("main", "(i64)->i64", 4, `
			movi r1, r0
			ldi r2, 0
			call r1, 2, 1     # r1 = sum(r0, 0)
			call r3, 0, 2     # void call at the top of the frame
			ret r1`),
		itFn("sum", "(i64,i64)->i64", 2, `
			jeqi r0, 0, done
			add r1, r1, r0
			subi r0, r0, 1
			tailcall r0, 2, 1
		done:
			ret r1`),
		itFn("nothing", "()->void", 1, "ldi r0, 1; retv"))
	sig, e := itCall(t, p, "main", I64(100000))
	if sig != SigCompleted || e.Result().Int() != 5000050000 {
		t.Errorf("sum = %v %v", sig, e.Result())
	}
	if e.fp != 0 {
		t.Errorf("frame depth %d after return", e.fp)
	}

	// a void entry function completes with Void
	p = itProg(t, nil, itFn("v", "()->void", 1, "retv"))
	if sig, e := itCall(t, p, "v"); sig != SigCompleted || e.Result().Kind() != KindVoid {
		t.Errorf("void entry = %v %v", sig, e.Result())
	}
}

// TestStackOverflow: unbounded recursion traps at Limits.MaxFrames.
func TestStackOverflow(t *testing.T) {
	p := itProg(t, nil, itFn("down", "(i64)->i64", 2, "addi r1, r0, 1; call r1, 1, 0; ret r1"))
	e, err := NewExec(p, 0, []Value{I64(0)}, Limits{MaxFrames: 500}, 1)
	require.NoError(t, err)
	if sig := itRun(t, e, 1<<30); sig != SigTrapped || e.Trap().Code != TrapStackOverflow {
		t.Fatalf("got %v %v", sig, e.Trap())
	}
	if tr := e.Trap(); tr.Func != "down" || tr.PC != 1 {
		t.Errorf("trap at %s@%d", tr.Func, tr.PC)
	}
	if e.fp != 499 {
		t.Errorf("depth at the trap = %d frames, want 500", e.fp+1)
	}
	// the default limit, with a wide window so that the register stack grows
	p = itProg(t, nil, itFn("down", "(i64)->i64", 201, "addi r200, r0, 1; call r200, 1, 0; ret r200"))
	sig, e := itCall(t, p, "down", I64(0))
	if sig != SigTrapped || e.Trap().Code != TrapStackOverflow {
		t.Fatalf("got %v %v", sig, e.Trap())
	}
	if len(e.regs) < 200*(DefaultLimits.MaxFrames-1) {
		t.Errorf("register stack %d slots", len(e.regs))
	}
}

// TestPreemptBackEdge: an infinite loop is preempted at its back edge with
// the budget accounted exactly.
func TestPreemptBackEdge(t *testing.T) {
	p := itProg(t, nil, itFn("spin", "()->i64", 1, "ldi r0, 0; loop: addi r0, r0, 1; jmp loop; ret r0"))
	e := itStart(t, p, "spin")
	var prev uint64
	for i := 0; i < 5; i++ {
		if sig := e.Run(1000); sig != SigPreempted {
			t.Fatalf("slice %d: %v", i, sig)
		}
		got := e.Reductions() - prev
		prev = e.Reductions()
		if got < 1000 || got > 1002 {
			t.Errorf("slice %d used %d reductions, want ~1000", i, got)
		}
		if fn, pc := e.Where(); fn != "spin" || pc != 1 {
			t.Errorf("preempted at %s@%d, want spin@1", fn, pc)
		}
		if e.Left() > 0 {
			t.Errorf("left %d after preemption", e.Left())
		}
	}
	// a forward branch is no safe point: the budget runs over until the back edge
	p = itProg(t, nil, itFn("f", "()->i64", 1, "ldi r0, 0; jmp a; a: jmp b; b: jmp c; c: ret r0"))
	if sig, _ := itCall(t, p, "f"); sig != SigCompleted {
		t.Errorf("forward jumps: %v", sig)
	}
	e = itStart(t, p, "f")
	if sig := e.Run(1); sig != SigCompleted || e.Reductions() != 5 {
		t.Errorf("forward jumps with budget 1: %v after %d reductions", sig, e.Reductions())
	}

	// Stop preempts at the next safe point, budget or not.
	e = itStart(t, itProg(t, nil, itFn("spin", "()->i64", 1, "ldi r0, 0; loop: addi r0, r0, 1; jmp loop; ret r0")), "spin")
	e.Stop()
	if sig := e.Run(1 << 40); sig != SigPreempted || e.Reductions() != 3 {
		t.Errorf("stopped: %v after %d reductions", sig, e.Reductions())
	}
	if !e.Stopped() {
		t.Error("Stopped() = false")
	}
	e.ClearStop()
	if sig := e.Run(100); sig != SigPreempted || e.Reductions() != 103 {
		t.Errorf("after ClearStop: %v after %d reductions", sig, e.Reductions())
	}
}

// itBytes is a program with byte-buffer helpers: mk(n) makes a buffer of n
// bytes where b[i] = i & 255.
func itBytesFns() []Function {
	return []Function{
		itFn("mk", "(i64)->ref", 4, `
			bnew r1, r0
			ldi r2, 0
			jmp test
		loop:
			bset r1, r2, r2
			addi r2, r2, 1
		test:
			jlt r2, r0, loop
			ret r1`),
	}
}

// TestBytes covers bnew, blen, bget, bset, bcopy, bslice, bfind, beq, stob
// and btos.
func TestBytes(t *testing.T) {
	fns := append(itBytesFns(),
		// ops(n) exercises everything on a buffer of n bytes
		itFn("ops", "(i64)->ref", 12, `
			movi r1, r0
			call r1, 1, 0       # r1 = mk(n)
			blen r2, r1         # r2 = n
			ldi r3, 5
			bget r4, r1, r3     # r4 = 5
			ldi r5, 300
			bset r1, r3, r5     # b[5] = 300 & 255 = 44
			bget r6, r1, r3
			ldi r7, 2
			bslice r8, r1, r7, r3   # r8 = b[2:5] = 2 3 4
			ldi r9, 0
			bfind r10, r1, r8, r9   # 2
			beq r11, r8, r8         # 1
			add r4, r4, r6      # 5 + 44
			add r4, r4, r10     # + 2
			add r4, r4, r11     # + 1
			add r4, r4, r2      # + n
			itos r0, r4
			ret r0`),
		itFn("cp", "()->ref", 8, `
			ldi r0, 10
			call r0, 1, 0       # r0 = mk(10) = 0..9
			ldi r1, 2; ldi r2, 0; ldi r3, 5
			bcopy r0, r1, r0, r2, r3   # overlapping: b[2:7] = b[0:5]
			ret r0`),
		itFn("cpdown", "()->ref", 8, `
			ldi r0, 10
			call r0, 1, 0
			ldi r1, 0; ldi r2, 3; ldi r3, 7
			bcopy r0, r1, r0, r2, r3   # b[0:7] = b[3:10]
			ret r0`),
		itFn("str", "()->ref", 6, `
			lds r0, 0
			stob r1, r0
			ldi r2, 0; ldi r3, 104      # 'h'
			bset r1, r2, r3
			btos r4, r1
			ret r4`),
		itFn("find", "(ref,ref,i64)->i64", 4, "bfind r3, r0, r1, r2; ret r3"),
		itFn("eq", "(ref,ref)->i64", 3, "beq r2, r0, r1; ret r2"),
		itFn("get", "(ref,i64)->i64", 3, "bget r2, r0, r1; ret r2"),
		itFn("set", "(ref,i64)->ref", 3, "bset r0, r1, r1; ret r0"),
		itFn("slice", "(ref,i64,i64)->ref", 4, "bslice r3, r0, r1, r2; ret r3"),
		itFn("copy", "(ref,i64,ref,i64,i64)->ref", 5, "bcopy r0, r1, r2, r3, r4; ret r0"),
		itFn("new", "(i64)->ref", 2, "bnew r1, r0; ret r1"),
	)
	p := itProg(t, &Program{KStr: []string{"jade"}}, fns...)

	if sig, e := itCall(t, p, "ops", I64(100)); sig != SigCompleted || e.Result().String() != "152" {
		t.Errorf("ops(100) = %v %v %v", sig, e.Result(), e.Trap())
	}
	if sig, e := itCall(t, p, "cp"); sig != SigCompleted || string(e.Result().BytesData()) != "\x00\x01\x00\x01\x02\x03\x04\x07\x08\x09" {
		t.Errorf("overlapping bcopy = %v %q", sig, e.Result().BytesData())
	}
	if sig, e := itCall(t, p, "cpdown"); sig != SigCompleted || string(e.Result().BytesData()) != "\x03\x04\x05\x06\x07\x08\x09\x07\x08\x09" {
		t.Errorf("overlapping bcopy down = %v %q", sig, e.Result().BytesData())
	}
	if sig, e := itCall(t, p, "str"); sig != SigCompleted || e.Result().Kind() != KindString || e.Result().String() != "hade" {
		t.Errorf("stob/btos = %v %v", sig, e.Result())
	}

	B := func(s string) Value { return Bytes([]byte(s)) }
	for _, c := range []struct {
		hay, needle string
		start, want int64
	}{
		{"hello world", "o", 0, 4}, {"hello world", "o", 5, 7}, {"hello world", "x", 0, -1},
		{"hello", "", 3, 3}, {"hello", "", 5, 5}, {"hello", "hello!", 0, -1}, {"aab", "ab", 0, 1},
		{"hello", "lo", 3, 3}, {"hello", "lo", 4, -1},
	} {
		sig, e := itCall(t, p, "find", B(c.hay), B(c.needle), I64(c.start))
		if sig != SigCompleted || e.Result().Int() != c.want {
			t.Errorf("bfind(%q, %q, %d) = %v %v, want %d", c.hay, c.needle, c.start, sig, e.Result(), c.want)
		}
	}
	for _, c := range []struct {
		a, b string
		want int64
	}{{"", "", 1}, {"ab", "ab", 1}, {"ab", "ac", 0}, {"ab", "abc", 0}} {
		if sig, e := itCall(t, p, "eq", B(c.a), B(c.b)); sig != SigCompleted || e.Result().Int() != c.want {
			t.Errorf("beq(%q, %q) = %v %v", c.a, c.b, sig, e.Result())
		}
	}

	bounds := []struct {
		fn   string
		args []Value
	}{
		{"find", []Value{B("abc"), B("a"), I64(4)}},
		{"find", []Value{B("abc"), B("a"), I64(-1)}},
		{"get", []Value{B("abc"), I64(3)}},
		{"get", []Value{B("abc"), I64(-1)}},
		{"set", []Value{B("abc"), I64(3)}},
		{"slice", []Value{B("abc"), I64(2), I64(1)}},
		{"slice", []Value{B("abc"), I64(-1), I64(1)}},
		{"slice", []Value{B("abc"), I64(0), I64(4)}},
		{"copy", []Value{B("abc"), I64(1), B("xyz"), I64(0), I64(3)}},
		{"copy", []Value{B("abc"), I64(0), B("xyz"), I64(1), I64(3)}},
		{"copy", []Value{B("abc"), I64(0), B("xyz"), I64(0), I64(-1)}},
		{"copy", []Value{B("abc"), I64(-1), B("xyz"), I64(0), I64(1)}},
		{"copy", []Value{B("abc"), I64(maxI64), B("xyz"), I64(0), I64(2)}},
		{"new", []Value{I64(-1)}},
	}
	for _, c := range bounds {
		if sig, e := itCall(t, p, c.fn, c.args...); sig != SigTrapped || e.Trap().Code != TrapBounds {
			t.Errorf("%s%v = %v %v, want a bounds trap", c.fn, c.args, sig, e.Trap())
		}
	}
	if sig, e := itCall(t, p, "slice", B("abcdef"), I64(1), I64(4)); sig != SigCompleted || string(e.Result().BytesData()) != "bcd" {
		t.Errorf("bslice = %v %v", sig, e.Result())
	}
	if sig, e := itCall(t, p, "copy", B("abcdef"), I64(4), B("xyz"), I64(1), I64(2)); sig != SigCompleted || string(e.Result().BytesData()) != "abcdyz" {
		t.Errorf("bcopy = %v %v", sig, e.Result())
	}
	if sig, e := itCall(t, p, "copy", B("ab"), I64(2), B("xyz"), I64(3), I64(0)); sig != SigCompleted || string(e.Result().BytesData()) != "ab" {
		t.Errorf("empty bcopy at the ends = %v %v %v", sig, e.Result(), e.Trap())
	}
}

// TestStrings covers lds, slen, sconcat, seq, itos.
func TestStrings(t *testing.T) {
	p := itProg(t, &Program{KStr: []string{"ja", "de", "jade"}},
		itFn("f", "()->ref", 8, `
			lds r0, 0
			lds r1, 1
			sconcat r2, r0, r1
			lds r3, 2
			seq r4, r2, r3      # 1
			seq r5, r0, r3      # 0
			slen r6, r2         # 4
			add r4, r4, r5
			muli r4, r4, 100
			add r4, r4, r6      # 104
			itos r7, r4
			sconcat r7, r2, r7
			ret r7`),
		itFn("itos", "(i64)->ref", 2, "itos r1, r0; ret r1"),
		itFn("seq", "(ref,ref)->i64", 3, "seq r2, r0, r1; ret r2"),
	)
	if sig, e := itCall(t, p, "f"); sig != SigCompleted || e.Result().String() != "jade104" {
		t.Errorf("f = %v %v %v", sig, e.Result(), e.Trap())
	}
	for _, n := range []int64{0, -1, minI64, maxI64} {
		want := Str(map[int64]string{0: "0", -1: "-1", minI64: "-9223372036854775808", maxI64: "9223372036854775807"}[n])
		if sig, e := itCall(t, p, "itos", I64(n)); sig != SigCompleted || !e.Result().Equal(want) {
			t.Errorf("itos %d = %v %v", n, sig, e.Result())
		}
	}
	if sig, e := itCall(t, p, "seq", Str("a"), Str("ab")); sig != SigCompleted || e.Result().Int() != 0 {
		t.Errorf("seq = %v %v", sig, e.Result())
	}
	if sig, e := itCall(t, p, "seq", Str(""), Str("")); sig != SigCompleted || e.Result().Int() != 1 {
		t.Errorf("seq empty = %v %v", sig, e.Result())
	}
}

// TestLDSReusesHandle: a loop of lds does not grow the heap, and lds after
// free makes a fresh handle.
func TestLDSReusesHandle(t *testing.T) {
	p := itProg(t, &Program{KStr: []string{"constant"}}, itFn("f", "(i64)->ref", 3, `
		lds r1, 0
	loop:
		lds r2, 0
		subi r0, r0, 1
		jgti r0, 0, loop
		free r1
		lds r1, 0
		slen r0, r1
		ret r2`))
	e := itStart(t, p, "f", I64(10000))
	sig := e.Run(50)
	after := e.HeapBytes()
	if sig != SigPreempted || after != objHeader+8 {
		t.Fatalf("after 50 reductions: %v, heap %d", sig, after)
	}
	if sig := itRun(t, e, 1<<30); sig != SigTrapped || e.Trap().Code != TrapHandle || !strings.Contains(e.Trap().Msg, "stale") {
		// r2 holds the handle freed through r1: returning it is a use of a stale handle
		t.Fatalf("ret of the freed constant handle: %v %v", sig, e.Trap())
	}
	if e.HeapBytes() != objHeader+8 {
		t.Errorf("heap after free and lds: %d bytes", e.HeapBytes())
	}
}

// TestArrays covers anew, alen, ageti/f/r and aseti/f/r.
func TestArrays(t *testing.T) {
	p := itProg(t, &Program{KStr: []string{"x"}},
		itFn("f", "(i64)->ref", 12, `
			anew r1, r0, i64
			anew r2, r0, f64
			anew r3, r0, ref
			ldi r4, 1
			ldi r5, 77
			aseti r1, r4, r5
			itof r6, r5
			asetf r2, r4, r6
			lds r7, 0
			asetr r3, r4, r7
			ageti r8, r1, r4     # 77
			agetf r9, r2, r4
			ftoi r9, r9          # 77
			add r8, r8, r9
			alen r10, r3
			add r8, r8, r10      # + n
			ldi r4, 0
			agetr r11, r3, r4    # null
			asetr r3, r4, r11
			ldi r4, 2
			anew r11, r4, ref
			asetr r11, r4, r3    # wrong: index 2 of a 2-array
			ret r11`),
		itFn("g", "(i64)->ref", 12, `
			anew r1, r0, i64
			ldi r4, 1; ldi r5, 77
			aseti r1, r4, r5
			anew r3, r0, ref
			asetr r3, r4, r1     # [null, [0, 77, ...]]
			ret r3`),
		itFn("len", "(ref)->i64", 2, "alen r1, r0; ret r1"),
		itFn("geti", "(ref,i64)->i64", 3, "ageti r2, r0, r1; ret r2"),
		itFn("getf", "(ref,i64)->f64", 3, "agetf r2, r0, r1; ret r2"),
		itFn("getr", "(ref,i64)->ref", 3, "agetr r2, r0, r1; ret r2"),
		itFn("seti", "(ref,i64)->ref", 3, "aseti r0, r1, r1; ret r0"),
		itFn("setf", "(ref,i64,f64)->ref", 3, "asetf r0, r1, r2; ret r0"),
		itFn("new", "(i64)->ref", 2, "anew r1, r0, f64; ret r1"),
	)
	if sig, e := itCall(t, p, "f", I64(2)); sig != SigTrapped || e.Trap().Code != TrapBounds || e.Trap().PC != 21 {
		t.Errorf("f = %v %v", sig, e.Trap())
	}
	sig, e := itCall(t, p, "g", I64(3))
	if sig != SigCompleted || e.Result().String() != "[void, [0, 77, 0], void]" {
		t.Errorf("g = %v %v %v", sig, e.Result(), e.Trap())
	}
	ai, _ := Array(KindI64, I64(1), I64(2))
	af, _ := Array(KindF64, F64(1.5))
	ar, _ := Array(KindString, Str("s"), Void())
	check := func(fn string, args []Value, want Value) {
		t.Helper()
		if sig, e := itCall(t, p, fn, args...); sig != SigCompleted || !e.Result().Equal(want) {
			t.Errorf("%s%v = %v %v %v, want %v", fn, args, sig, e.Result(), e.Trap(), want)
		}
	}
	check("len", []Value{ai}, I64(2))
	check("len", []Value{af}, I64(1))
	check("len", []Value{ar}, I64(2))
	check("geti", []Value{ai, I64(1)}, I64(2))
	check("getf", []Value{af, I64(0)}, F64(1.5))
	check("getr", []Value{ar, I64(0)}, Str("s"))
	check("getr", []Value{ar, I64(1)}, Void())
	ai2, _ := Array(KindI64, I64(1), I64(1))
	check("seti", []Value{ai, I64(1)}, ai2)
	af2, _ := Array(KindF64, F64(-2))
	check("setf", []Value{af, I64(0), F64(-2)}, af2)
	af3, _ := Array(KindF64, F64(0), F64(0))
	check("new", []Value{I64(2)}, af3)
	for _, c := range []struct {
		fn   string
		args []Value
		code TrapCode
	}{
		{"geti", []Value{ai, I64(2)}, TrapBounds},
		{"geti", []Value{ai, I64(-1)}, TrapBounds},
		{"getf", []Value{af, I64(1)}, TrapBounds},
		{"getr", []Value{ar, I64(2)}, TrapBounds},
		{"seti", []Value{ai, I64(5)}, TrapBounds},
		{"setf", []Value{af, I64(1), F64(0)}, TrapBounds},
		{"geti", []Value{af, I64(0)}, TrapHandle},
		{"getf", []Value{ai, I64(0)}, TrapHandle},
		{"getr", []Value{ai, I64(0)}, TrapHandle},
		{"len", []Value{Str("x")}, TrapHandle},
		{"new", []Value{I64(-1)}, TrapBounds},
		{"new", []Value{I64(maxI64)}, TrapHeapLimit},
		{"new", []Value{I64(1 << 40)}, TrapHeapLimit},
	} {
		if sig, e := itCall(t, p, c.fn, c.args...); sig != SigTrapped || e.Trap().Code != c.code {
			t.Errorf("%s%v = %v %v, want %v", c.fn, c.args, sig, e.Trap(), c.code)
		}
	}
}

// TestArrayCycle: an array can't be stored into itself or into an array it
// contains; DAG sharing is fine.
func TestArrayCycle(t *testing.T) {
	p := itProg(t, nil,
		itFn("self", "()->ref", 3, "ldi r0, 1; anew r1, r0, ref; ldi r0, 0; asetr r1, r0, r1; ret r1"),
		itFn("loop", "()->ref", 4, `
			ldi r0, 1
			anew r1, r0, ref
			anew r2, r0, ref
			ldi r0, 0
			asetr r1, r0, r2    # a = [b]
			asetr r2, r0, r1    # b = [a]: cycle
			ret r1`),
		itFn("dag", "()->ref", 4, `
			ldi r0, 2
			anew r1, r0, ref
			anew r2, r0, ref
			ldi r0, 0
			asetr r1, r0, r2
			ldi r0, 1
			asetr r1, r0, r2    # a = [b, b]
			ret r1`))
	for _, fn := range []string{"self", "loop"} {
		if sig, e := itCall(t, p, fn); sig != SigTrapped || e.Trap().Code != TrapHandle || !strings.Contains(e.Trap().Msg, "acyclic") {
			t.Errorf("%s = %v %v", fn, sig, e.Trap())
		}
	}
	if sig, e := itCall(t, p, "dag"); sig != SigCompleted || e.Result().String() != "[[void, void], [void, void]]" {
		t.Errorf("dag = %v %v", sig, e.Result())
	}
}

// TestErrorsAndThrow covers newerr, throw, errmsg, errkind, nested .try
// ranges and unwinding across frames.
func TestErrorsAndThrow(t *testing.T) {
	p := itProg(t, &Program{KStr: []string{"boom", "inner", "outer"}},
		// thrower(k): throws "boom" when k != 0, else returns 1
		itFn("thrower", "(i64)->i64", 3, `
			jz r0, ok
			lds r1, 0
			newerr r2, r1
			throw r2
		ok:
			ldi r0, 1
			ret r0`),
		// nested(k): the inner handler catches throws in [t0,t1), the outer
		// one everything in [t0,t2)
		itFn("nested", "(i64)->ref", 5, `
		t0:
			movi r1, r0
			call r1, 1, 0      # may throw through the inner range
		t1:
			lds r3, 2
			newerr r3, r3
			throw r3           # outer handler
		t2:
			ldi r0, 0
			itos r0, r0
			ret r0
		inner:
			errmsg r4, r2
			lds r3, 1
			sconcat r4, r3, r4
			ret r4
		outer:
			errkind r3, r2
			errmsg r4, r2
			sconcat r4, r3, r4
			ret r4`,
			"t0,t1,inner,r2", "t0,t2,outer,r2"),
		// deep(n, k): recursion n deep, thrower at the bottom; caught at the top
		itFn("deep", "(i64,i64)->ref", 4, `
		t0:
			movi r2, r0
			movi r3, r1
			call r2, 2, 3
		t1:
			ldi r0, 0
			itos r0, r0
			ret r0
		h:
			errmsg r2, r2
			ret r2`, "t0,t1,h,r2"),
		itFn("down", "(i64,i64)->i64", 3, `
			jeqi r0, 0, bottom
			subi r0, r0, 1
			call r0, 2, 3
			ret r0
		bottom:
			movi r2, r1
			call r2, 1, 0
			ret r2`),
		itFn("uncaught", "()->i64", 2, "ldi r0, 1; call r0, 1, 0; ret r0"),
		// a handler that loops back into its own range: the throw is a safe point
		itFn("rethrow", "(i64)->i64", 3, `
		t0:
			jeqi r0, 0, done
			subi r0, r0, 1
			lds r1, 0
			newerr r1, r1
			throw r1
		t1:
		done:
			ret r0
		h:
			jmp t0`, "t0,t1,h,r2"),
	)
	for _, c := range []struct {
		fn   string
		args []Value
		want string
	}{
		{"nested", []Value{I64(1)}, "innerboom"},
		{"nested", []Value{I64(0)}, "Errorouter"},
		{"deep", []Value{I64(50), I64(1)}, "boom"},
		{"deep", []Value{I64(50), I64(0)}, "0"},
	} {
		sig, e := itCall(t, p, c.fn, c.args...)
		if sig != SigCompleted || e.Result().String() != c.want {
			t.Errorf("%s%v = %v %v %v, want %q", c.fn, c.args, sig, e.Result(), e.Trap(), c.want)
		}
	}
	sig, e := itCall(t, p, "uncaught")
	if sig != SigThrown || !e.Thrown().Equal(Err(ErrKindError, "boom")) {
		t.Errorf("uncaught = %v %v", sig, e.Thrown())
	}
	if e.Run(100) != SigThrown {
		t.Error("Run after SigThrown does not repeat it")
	}
	// each caught throw is a safe point
	e = itStart(t, p, "rethrow", I64(1000))
	slices := 0
	for e.Run(1) == SigPreempted {
		slices++
	}
	if e.Result().Int() != 0 || slices < 1000 {
		t.Errorf("rethrow = %v after %d slices", e.Result(), slices)
	}
}

// TestHandleTraps: null, stale, wrong-kind and foreign handles trap with a
// message naming the problem.
func TestHandleTraps(t *testing.T) {
	p := itProg(t, &Program{KStr: []string{"s"}},
		itFn("null", "()->i64", 3, "ldi r0, 1; anew r1, r0, ref; ldi r0, 0; agetr r2, r1, r0; slen r0, r2; ret r0"),
		itFn("stale", "()->i64", 3, "ldi r0, 4; bnew r1, r0; movr r2, r1; free r1; blen r0, r2; ret r0"),
		// a string through an array element: the verifier cannot know its kind
		itFn("kind", "()->i64", 3, "ldi r0, 1; anew r1, r0, ref; ldi r0, 0; lds r2, 0; asetr r1, r0, r2; agetr r2, r1, r0; blen r0, r2; ret r0"),
		itFn("slen", "(ref)->i64", 2, "slen r1, r0; ret r1"),
		itFn("dfree", "()->i64", 3, "ldi r0, 4; bnew r1, r0; free r1; free r1; ret r0"),
		itFn("throwstr", "()->i64", 3, "lds r1, 0; throw r1; ret r0"),
	)
	for _, c := range []struct{ fn, msg string }{
		{"null", "null handle (want string)"},
		{"stale", "stale handle"},
		{"kind", "wrong kind: want bytes got string"},
		{"dfree", "stale handle"},
		{"throwstr", "wrong kind: want error got string"},
	} {
		sig, e := itCall(t, p, c.fn)
		if sig != SigTrapped || e.Trap().Code != TrapHandle || !strings.Contains(e.Trap().Msg, c.msg) {
			t.Errorf("%s = %v %v, want %q", c.fn, sig, e.Trap(), c.msg)
		}
	}
	// foreign: a handle of another task planted in a ref register
	other := itStart(t, p, "slen", Str("mine"))
	e2, err := NewExec(p, p.FuncIndex("slen"), []Value{Str("x")}, DefaultLimits, 8)
	require.NoError(t, err)
	e2.setAbs(0, other.regs[0], TRef)
	sig := itRun(t, e2, 100)
	if sig != SigTrapped || e2.Trap().Code != TrapHandle || !strings.Contains(e2.Trap().Msg, "foreign handle") {
		t.Errorf("foreign handle: %v %v", sig, e2.Trap())
	}
}

// TestHeapLimit: allocation beyond Limits.MaxHeapBytes traps.
func TestHeapLimit(t *testing.T) {
	p := itProg(t, nil, itFn("grow", "(i64)->i64", 3, `
		ldi r1, 0
	loop:
		bnew r2, r0
		addi r1, r1, 1
		jmp loop
		ret r1`))
	e, err := NewExec(p, 0, []Value{I64(1000)}, Limits{MaxHeapBytes: 100_000}, 1)
	require.NoError(t, err)
	sig := itRun(t, e, 1000)
	if sig != SigTrapped || e.Trap().Code != TrapHeapLimit || e.Trap().PC != 1 {
		t.Fatalf("got %v %v", sig, e.Trap())
	}
	if n := e.HeapBytes(); n > 100_000 || n < 100_000-1032 {
		t.Errorf("heap at the trap: %d bytes", n)
	}
	// sconcat doubling hits the limit too
	p = itProg(t, &Program{KStr: []string{"x"}}, itFn("dbl", "()->i64", 2, "lds r0, 0; loop: sconcat r0, r0, r0; jmp loop; ret r1"))
	e, _ = NewExec(p, 0, nil, Limits{MaxHeapBytes: 1 << 20}, 1)
	if sig := itRun(t, e, 1000); sig != SigTrapped || e.Trap().Code != TrapHeapLimit {
		t.Fatalf("sconcat: %v %v", sig, e.Trap())
	}
	// NewExec refuses arguments over the limit
	if _, err := NewExec(p, 0, nil, Limits{MaxHeapBytes: 10}, 1); err != nil {
		t.Errorf("no args: %v", err)
	}
	big := itProg(t, nil, itFn("f", "(ref)->i64", 1, "ldi r0, 0; ret r0"))
	if _, err := NewExec(big, 0, []Value{Bytes(make([]byte, 100))}, Limits{MaxHeapBytes: 64}, 1); err == nil ||
		!strings.Contains(err.Error(), "heap limit") {
		t.Errorf("oversized argument: %v", err)
	}
}

// TestBulkChunking: bulk instructions over more than 64 KiB are split into
// chunks, preempted between them, and resumed to the right result.
func TestBulkChunking(t *testing.T) {
	const n = 1 << 20
	p := itProg(t, nil, append(itBytesFns(),
		itFn("copy", "(ref,ref)->ref", 5, "ldi r2, 0; ldi r3, 1048576; bcopy r0, r2, r1, r2, r3; ret r0"),
		itFn("beq", "(ref,ref)->i64", 3, "beq r2, r0, r1; ret r2"),
		itFn("seq", "(ref,ref)->i64", 3, "seq r2, r0, r1; ret r2"),
		itFn("find", "(ref,ref)->i64", 4, "ldi r3, 1; bfind r2, r0, r1, r3; ret r2"),
		itFn("memmove", "(ref)->ref", 5, "ldi r1, 1; ldi r2, 0; ldi r3, 1048575; bcopy r0, r1, r0, r2, r3; ret r0"),
	)...)
	src := make([]byte, n)
	x := uint64(1)
	for i := range src {
		x = x*6364136223846793005 + 1442695040888963407
		src[i] = byte(x >> 56)
	}
	runSliced := func(fn string, budget int64, args ...Value) (*Exec, int) {
		t.Helper()
		e := itStart(t, p, fn, args...)
		slices := 0
		for {
			sig := e.Run(budget)
			if sig != SigPreempted {
				if sig != SigCompleted {
					t.Fatalf("%s: %v %v", fn, sig, e.Trap())
				}
				return e, slices
			}
			fnName, pc := e.Where()
			op := p.Funcs[p.FuncIndex(fn)].Code[pc].Op()
			if op == RET {
				continue // the copy of the result out of the heap
			}
			if info, _ := op.Info(); fnName != fn || info.Flags&FlagBulk == 0 {
				t.Fatalf("%s preempted at %s@%d, not at its bulk instruction", fn, fnName, pc)
			}
			slices++
		}
	}
	e, slices := runSliced("copy", 100, Bytes(make([]byte, n)), Bytes(src))
	if string(e.Result().BytesData()) != string(src) {
		t.Error("chunked bcopy copied the wrong bytes")
	}
	if slices < 15 {
		t.Errorf("1 MiB bcopy with budget 100 took %d slices, want one per 64 KiB chunk", slices)
	}
	// cost: 4 instructions + 1 MiB / 64, and the result's copy out of
	// the heap (an object and 1 MiB / 64)
	if got, want := e.Reductions(), uint64(4+n/64+copyObjCost+n/64); got != want {
		t.Errorf("bcopy used %d reductions, want %d", got, want)
	}
	// the unsliced run gives the same result and cost
	e2, slices2 := runSliced("copy", 1<<40, Bytes(make([]byte, n)), Bytes(src))
	if slices2 != 0 || e2.Reductions() != e.Reductions() || !e2.Result().Equal(e.Result()) {
		t.Errorf("unsliced bcopy: %d slices, %d reductions", slices2, e2.Reductions())
	}

	want := append([]byte{src[0]}, src[:n-1]...)
	if e, slices := runSliced("memmove", 1000, Bytes(src)); string(e.Result().BytesData()) != string(want) || slices < 10 {
		t.Errorf("chunked overlapping bcopy: wrong bytes or %d slices", slices)
	}

	other := append([]byte(nil), src...)
	other[n-1]++
	for _, c := range []struct {
		fn   string
		a, b Value
		want int64
	}{
		{"beq", Bytes(src), Bytes(src), 1},
		{"beq", Bytes(src), Bytes(other), 0},
		{"seq", Str(string(src)), Str(string(src)), 1},
		{"seq", Str(string(src)), Str(string(other)), 0},
		{"find", Bytes(src), Bytes(src[n-100:]), n - 100},
		{"find", Bytes(src), Bytes(other[n-100:]), -1},
		{"find", Bytes(src), Bytes(src[:10]), -1},
	} {
		e, slices := runSliced(c.fn, 100, c.a, c.b)
		if e.Result().Int() != c.want || slices < 10 {
			t.Errorf("%s = %v after %d slices, want %d", c.fn, e.Result(), slices, c.want)
		}
	}
}

// TestIntrinsics covers every builtin intrinsic opcode and intr: the
// request fields, the argument registers and the destination.
func TestIntrinsics(t *testing.T) {
	p := &Program{Intrinsics: []Import{{Name: "io.print_i64"}, {Name: "task.id"}, {Name: "task.join_i64"}}}
	p = itProg(t, p,
		itFn("main", "(i64)->i64", 8, `
			movi r1, r0
			ldi r2, 5
			spawn r1, 2, 1        # r1 = task(worker(r0, 5))
			joini r3, r1
			joinf r4, r1
			ftoi r4, r4
			add r3, r3, r4
			joinr r5, r1
			slen r4, r5
			add r3, r3, r4
			joinv r1
			outcome r4, r1
			add r3, r3, r4
			yield
			cancel r1
			cancelled r4
			add r3, r3, r4
			evnew r6
			evwait r6
			evsignal r6
			evbcast r6
			movi r7, r3
			intr r7, 1, 0         # io.print_i64(r3)
			intr r7, 0, 1         # r7 = task.id()
			add r3, r3, r7
			movr r7, r1
			intr r7, 1, 2         # r7 = task.join_i64(r1)
			add r3, r3, r7
			ret r3`),
		itFn("worker", "(i64,i64)->i64", 2, "add r0, r0, r1; ret r0"),
	)
	e := itStart(t, p, "main", I64(10))
	type step struct {
		op     Op
		base   uint8
		nargs  int
		reply  Value
		argReg int // the register the request's argument 0 reads, -1: none
	}
	task, event := &struct{ id int }{1}, &struct{ id int }{2}
	steps := []step{
		{SPAWN, 1, 2, Ext(KindTask, task), 1},
		{JOINI, 3, 1, I64(100), 1},
		{JOINF, 4, 1, F64(20.5), 1},
		{JOINR, 5, 1, Str("abc"), 1},
		{JOINV, 1, 1, Void(), 1},
		{OUTCOME, 4, 1, I64(3), 1},
		{YIELD, 0, 0, Void(), -1},
		{CANCEL, 1, 1, Void(), 1},
		{CANCELLED, 4, 0, I64(1), -1},
		{EVNEW, 6, 0, Ext(KindEvent, event), -1},
		{EVWAIT, 6, 1, Void(), 6},
		{EVSIGNAL, 6, 1, Void(), 6},
		{EVBCAST, 6, 1, Void(), 6},
		{INTR, 7, 1, Void(), 7},
		{INTR, 7, 0, I64(1000), -1},
		{INTR, 7, 1, I64(10000), 7},
	}
	for i, s := range steps {
		sig := e.Run(1 << 30)
		if sig != SigIntrinsic {
			t.Fatalf("step %d (%s): %v %v", i, s.op, sig, e.Trap())
		}
		q := e.Request()
		if q.Op != s.op || q.Base != s.base || int(q.NArgs) != s.nargs {
			t.Fatalf("step %d: request %+v, want op %s base %d nargs %d", i, *q, s.op, s.base, s.nargs)
		}
		if q.Intr == nil || s.op != INTR && q.Intr != BuiltinIntrinsic(s.op) {
			t.Fatalf("step %d: request intrinsic %v", i, q.Intr)
		}
		switch s.op {
		case SPAWN:
			if q.Func != 1 || e.ArgI64(0) != 10 || e.ArgI64(1) != 5 {
				t.Fatalf("spawn request %+v args %d %d", *q, e.ArgI64(0), e.ArgI64(1))
			}
			if v, err := e.ArgValue(1); err != nil || !v.Equal(I64(5)) {
				t.Fatalf("spawn ArgValue(1) = %v %v", v, err)
			}
		case JOINI, JOINF, JOINR, JOINV, OUTCOME, CANCEL:
			if obj, err := e.ArgObj(0, KindTask); err != nil || obj != task {
				t.Fatalf("step %d: ArgObj = %v %v", i, obj, err)
			}
			if _, err := e.ArgObj(0, KindEvent); err == nil || !strings.Contains(err.Error(), "wrong kind: want event got task") {
				t.Fatalf("step %d: ArgObj as event: %v", i, err)
			}
		case EVWAIT, EVSIGNAL, EVBCAST:
			if obj, err := e.ArgObj(0, KindEvent); err != nil || obj != event {
				t.Fatalf("step %d: ArgObj = %v %v", i, obj, err)
			}
		case INTR:
			if s.nargs == 1 && q.Intr.Name == "io.print_i64" && e.ArgI64(0) != 100+20+3+3+1 {
				t.Fatalf("print_i64 argument %d", e.ArgI64(0))
			}
		}
		if fn, pc := e.Where(); fn != "main" || pc != int(e.reqPC)+1 {
			t.Fatalf("step %d: Where = %s@%d, request at %d", i, fn, pc, e.reqPC)
		}
		require.NoError(t, e.Complete(s.reply), "step %d: Complete", i)
		if e.Request() != nil {
			t.Fatalf("step %d: request still pending", i)
		}
	}
	if sig := e.Run(1 << 30); sig != SigCompleted || e.Result().Int() != 100+20+3+3+1+1000+10000 {
		t.Fatalf("main = %v %v %v", sig, e.Result(), e.Trap())
	}
	if err := e.Complete(Void()); err == nil {
		t.Error("Complete without a request succeeded")
	}
}

// TestRequestEdges: Complete kind mismatches, Run without Complete, Raise
// caught and uncaught, SetTrap.
func TestRequestEdges(t *testing.T) {
	p := itProg(t, &Program{KStr: []string{"s"}, Intrinsics: []Import{{Name: "io.print_str"}}},
		itFn("join", "(ref)->i64", 2, "joini r1, r0; ret r1"),
		itFn("joinr", "(ref)->ref", 2, "joinr r1, r0; ret r1"),
		itFn("try", "(ref)->i64", 3, `
		t0:
			joini r1, r0
		t1:
			ret r1
		h:
			errmsg r2, r2
			slen r1, r2
			ret r1`, "t0,t1,h,r2"),
		itFn("outer", "(ref)->i64", 3, `
		t0:
			movr r1, r0
			call r1, 1, 0
		t1:
			ret r1
		h:
			ldi r1, -1
			ret r1`, "t0,t1,h,r2"),
		itFn("evnew", "()->ref", 1, "evnew r0; ret r0"),
		itFn("outcome", "(ref)->i64", 2, "outcome r1, r0; ret r1"),
		itFn("print", "()->void", 1, "lds r0, 0; intr r0, 1, 0; retv"),
		itFn("yield", "()->void", 1, "yield; retv"),
	)
	task := Ext(KindTask, "t")
	start := func(fn string, args ...Value) *Exec {
		t.Helper()
		e := itStart(t, p, fn, args...)
		if sig := e.Run(1000); sig != SigIntrinsic {
			t.Fatalf("%s: %v", fn, sig)
		}
		return e
	}
	// JOINI of a task whose value is a string traps
	e := start("join", task)
	err := e.Complete(Str("not an int"))
	var ti TrapInfo
	if err == nil || !asTrap(err, &ti) || ti.Code != TrapKind || ti.PC != 0 || ti.Func != "join" {
		t.Fatalf("Complete(string) into i64: %v", err)
	}
	if sig := e.Run(100); sig != SigTrapped || e.Trap().Code != TrapKind {
		t.Errorf("Run after a kind mismatch: %v %v", sig, e.Trap())
	}
	for _, v := range []Value{F64(1), Void(), Str("x")} {
		e := start("join", task)
		if err := e.Complete(v); err == nil {
			t.Errorf("Complete(%v) into i64 accepted", v)
		}
	}
	e = start("joinr", task)
	if err := e.Complete(I64(1)); err == nil {
		t.Error("Complete(i64) into ref accepted")
	}
	e = start("joinr", task)
	bv := Bytes([]byte("xyz"))
	if err := e.Complete(bv); err != nil || e.Run(100) != SigCompleted || !e.Result().Equal(bv) {
		t.Errorf("joinr bytes: %v %v", err, e.Result())
	}
	// Run without Complete: the destination is zeroed (null for a ref)
	e = start("joinr", task)
	if sig := e.Run(100); sig != SigCompleted || e.Result().Kind() != KindVoid {
		t.Errorf("joinr without Complete: %v %v", sig, e.Result())
	}
	e = start("join", task)
	if sig := e.Run(100); sig != SigCompleted || e.Result().Int() != 0 {
		t.Errorf("join without Complete: %v %v", sig, e.Result())
	}

	// Raise: caught in the same frame, caught by a caller, uncaught
	e = start("try", task)
	if !e.Raise(Err(ErrKindTask, "joined task trapped")) {
		t.Fatal("Raise not caught")
	}
	if sig := e.Run(100); sig != SigCompleted || e.Result().Int() != int64(len("joined task trapped")) {
		t.Errorf("try: %v %v", sig, e.Result())
	}
	e = start("outer", task)
	if !e.Raise(Err(ErrKindError, "x")) || e.Run(100) != SigCompleted || e.Result().Int() != -1 {
		t.Errorf("outer: %v", e.Result())
	}
	e = start("join", task)
	if e.Raise(Err(ErrKindError, "failed")) {
		t.Fatal("uncaught Raise reported caught")
	}
	if sig := e.Run(100); sig != SigThrown || !e.Thrown().Equal(Err(ErrKindError, "failed")) {
		t.Errorf("uncaught Raise: %v %v", sig, e.Thrown())
	}
	// Raise at an instruction that cannot throw, or of a non-error, traps
	e = start("yield")
	if e.Raise(Err(ErrKindError, "x")) || e.Run(100) != SigTrapped || e.Trap().Code != TrapIntrinsic {
		t.Errorf("Raise at yield: %v", e.Trap())
	}
	// outcome and evwait may throw (a wait timeout, ABI 1.1)
	e = start("outcome", task)
	if e.Raise(Err(ErrKindTimeout, "x")) || e.Run(100) != SigThrown {
		t.Errorf("Raise at outcome: %v", e.Trap())
	}
	e = start("try", task)
	if e.Raise(Str("x")) || e.Trap().Code != TrapIntrinsic {
		t.Errorf("Raise(string): %v", e.Trap())
	}
	// SetTrap
	e = start("evnew")
	e.SetTrap(TrapHostPanic, "host blew up")
	if sig := e.Run(100); sig != SigTrapped || e.Trap() != (TrapInfo{Code: TrapHostPanic, Msg: "host blew up", Func: "evnew", PC: 0}) {
		t.Errorf("SetTrap: %v %v", sig, e.Trap())
	}
	// ArgObj of a string, ArgValue of a ref
	e = start("print")
	if s, err := e.ArgObj(0, KindString); err != nil || s != "s" {
		t.Errorf("ArgObj string: %v %v", s, err)
	}
	if v, err := e.ArgValue(0); err != nil || !v.Equal(Str("s")) {
		t.Errorf("ArgValue string: %v %v", v, err)
	}
	if _, err := e.ArgObj(0, KindBytes); err == nil {
		t.Error("ArgObj(bytes) accepted")
	}
	mustPanic(t, "ArgI64 of a ref", func() { e.ArgI64(0) })
	mustPanic(t, "ArgF64 out of range", func() { e.ArgF64(1) })
	if err := e.Complete(Void()); err != nil || e.Run(100) != SigCompleted {
		t.Errorf("print: %v", err)
	}
	mustPanic(t, "ArgI64 without a request", func() { e.ArgI64(0) })
}

func asTrap(err error, ti *TrapInfo) bool {
	t, ok := err.(TrapInfo)
	*ti = t
	return ok
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", what)
		}
	}()
	f()
}

// TestNewExec: verification, argument count and types, imported refs,
// Free.
func TestNewExec(t *testing.T) {
	p := itProg(t, nil, itFn("f", "(i64,f64,ref)->ref", 3, "ret r2"))
	raw := &Program{ABI: ABI, Funcs: []Function{itFn("f", "()->i64", 1, "ldi r0, 1; ret r0")}}
	if _, err := NewExec(raw, 0, nil, DefaultLimits, 1); err == nil || !strings.Contains(err.Error(), "not verified") {
		t.Errorf("unverified program: %v", err)
	}
	for _, args := range [][]Value{
		{I64(1), F64(2)},
		{I64(1), I64(2), Str("x")},
		{F64(1), F64(2), Str("x")},
		{I64(1), F64(2), I64(3)},
	} {
		if _, err := NewExec(p, 0, args, DefaultLimits, 1); err == nil || !strings.HasPrefix(err.Error(), "vmloop: NewExec: ") {
			t.Errorf("NewExec%v: %v", args, err)
		}
	}
	if _, err := NewExec(p, 1, nil, DefaultLimits, 1); err == nil {
		t.Error("function index out of range accepted")
	}
	arr, _ := Array(KindBytes, Bytes([]byte("a")), Str("b"), Void())
	for _, v := range []Value{Str("x"), Bytes([]byte{1, 2}), arr, Err("E", "m"), Ext(KindExt, 5), Void()} {
		e, err := NewExec(p, 0, []Value{I64(1), F64(2), v}, DefaultLimits, 1)
		require.NoError(t, err)
		if sig := itRun(t, e, 100); sig != SigCompleted || !e.Result().Equal(v) {
			t.Errorf("round trip of %v: %v %v", v, sig, e.Result())
		}
		e.Free()
		if e.HeapBytes() != 0 || e.Run(10) != SigCompleted || !e.Result().Equal(v) {
			t.Errorf("after Free: heap %d, result %v", e.HeapBytes(), e.Result())
		}
		if fn, pc := e.Where(); fn != "" || pc != -1 {
			t.Errorf("Where after Free: %s@%d", fn, pc)
		}
	}
	// Free of a running task ends it
	e, _ := NewExec(p, 0, []Value{I64(1), F64(2), Void()}, DefaultLimits, 1)
	e.Free()
	if e.Run(10) != SigTrapped {
		t.Error("Run after Free did not trap")
	}
}

// TestFreeOp: free releases the object's bytes, and its handle goes stale.
func TestFreeOp(t *testing.T) {
	p := itProg(t, nil, itFn("f", "(i64,i64)->i64", 3, `
	loop:
		bnew r2, r0
		free r2
		subi r1, r1, 1
		jgti r1, 0, loop
		ret r1`))
	e, _ := NewExec(p, 0, []Value{I64(1 << 20), I64(1000)}, Limits{MaxHeapBytes: 2 << 20}, 1)
	if sig := itRun(t, e, 1<<30); sig != SigCompleted || e.HeapBytes() != 0 {
		t.Errorf("alloc/free loop: %v %v, heap %d", sig, e.Trap(), e.HeapBytes())
	}
	if len(e.heap.objs) != 1 {
		t.Errorf("alloc/free loop used %d slots, want 1 reused", len(e.heap.objs))
	}
}

// TestZeroAllocs: the steady state allocates nothing per instruction or
// call.
func TestZeroAllocs(t *testing.T) {
	p := itProg(t, nil,
		itFn("forever", "()->i64", 2, "loop: ldi r0, 15; call r0, 1, 1; jmp loop; ret r0"),
		itFib(1),
		itFn("count", "()->i64", 2, "ldi r0, 0; loop: addi r0, r0, 1; jlti r0, 30000, loop; jmp loop; ret r0"),
	)
	for _, fn := range []string{"forever", "count"} {
		e := itStart(t, p, fn)
		e.Run(100_000) // warm up: grow the frame stack
		if n := testing.AllocsPerRun(100, func() {
			if sig := e.Run(100_000); sig != SigPreempted {
				t.Fatalf("%s: %v", fn, sig)
			}
		}); n != 0 {
			t.Errorf("%s: %v allocations per 100k reductions", fn, n)
		}
	}
}

// BenchmarkLoopFib runs fib(30) through the loop.
func BenchmarkLoopFib(b *testing.B) {
	p := itProg(b, nil, itFib(0))
	b.ReportAllocs()
	var instrs uint64
	for b.Loop() {
		e, err := NewExec(p, 0, []Value{I64(30)}, DefaultLimits, 1)
		if err != nil {
			b.Fatal(err)
		}
		if sig := e.Run(1 << 60); sig != SigCompleted || e.Result().Int() != 832040 {
			b.Fatalf("fib(30) = %v %v", sig, e.Result())
		}
		instrs = e.Reductions()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(instrs), "ns/instr")
}

// BenchmarkLoopCount runs a counting loop of 10M iterations with preemption
// every 10k reductions.
func BenchmarkLoopCount(b *testing.B) {
	p := itProg(b, nil, itFn("count", "(i64)->i64", 2, "ldi r1, 0; loop: addi r1, r1, 1; jlt r1, r0, loop; ret r1"))
	for b.Loop() {
		e, _ := NewExec(p, 0, []Value{I64(10_000_000)}, DefaultLimits, 1)
		for e.Run(10_000) == SigPreempted {
		}
	}
}

// TestSetTrapAfterFailedComplete: the scheduler's usual reaction to a
// failed Complete (SetTrap with the returned code and message) keeps the
// trap at the request's instruction.
func TestSetTrapAfterFailedComplete(t *testing.T) {
	p := itProg(t, nil, itFn("join", "(ref)->i64", 2, "ldi r1, 0; joini r1, r0; ret r1"))
	e := itStart(t, p, "join", Ext(KindTask, 1))
	if sig := e.Run(100); sig != SigIntrinsic {
		t.Fatal(sig)
	}
	err := e.Complete(Str("x"))
	ti, ok := err.(TrapInfo)
	require.True(t, ok, "Complete: %v", err)
	e.SetTrap(ti.Code, ti.Msg)
	if got := e.Trap(); got != ti || got.PC != 1 || got.Func != "join" {
		t.Errorf("trap after SetTrap: %+v, want %+v at join@1", got, ti)
	}
	if e.Raise(Err(ErrKindError, "late")) || e.Trap() != ti {
		t.Errorf("Raise after the trap changed it: %+v", e.Trap())
	}
}
