package vmloop

import (
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
