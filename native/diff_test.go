package native

import (
	"fmt"
	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/vmhook"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/jadevm/jade/vmloop"
	"github.com/jadevm/jade/vmloop/jasm"
)

// The differential harness: the same verified program runs as two tasks,
// one on the Go loop and one on the C loop, in lockstep. Both get the same
// sequence of budgets and the same answers to intrinsic requests; after
// every Run the signal, the place (function and pc), the budget left and
// the total reductions must agree, so the preemption points are the same;
// at the end the result, thrown error or trap (code, function, pc, line)
// must agree too, and so must the Jade call stack of a trap or of an
// uncaught throw (diffEnd).

// answer chooses how a pending request is completed (the same for both).
type answer func(e *vmloop.Exec, k int)

// defaultAnswer completes with a value of the right type, or raises or
// traps, by the request counter k.
func defaultAnswer(e *vmloop.Exec, k int) {
	switch k % 5 {
	case 3:
		e.Raise(vmloop.Err(vmloop.ErrKindHost, "no"))
	case 4:
		e.SetTrap(vmloop.TrapHostPanic, "x")
	default:
		switch e.Request().Intr.Result {
		case vmloop.TI64:
			e.Complete(vmloop.I64(int64(5 + k)))
		case vmloop.TF64:
			e.Complete(vmloop.F64(0.5))
		default:
			e.Complete(vmloop.Void())
		}
	}
}

// completeAnswer always completes (no raise, no trap).
func completeAnswer(e *vmloop.Exec, k int) {
	switch e.Request().Intr.Result {
	case vmloop.TI64:
		e.Complete(vmloop.I64(int64(5 + k)))
	case vmloop.TF64:
		e.Complete(vmloop.F64(0.5))
	default:
		e.Complete(vmloop.Void())
	}
}

// diffStats counts what a differential run saw, and the stacks it ended
// with (equal on both loops).
type diffStats struct {
	runs, preempts, intrinsics int
	sig                        vmloop.Signal
	trapStack, thrownStack     vmloop.Stack
}

// runDiff runs p.Funcs[fn] with args on both loops with the budgets
// produced by budget (called once per Run) and reports the first
// difference as an error.
func runDiff(p *vmloop.Program, fn int, args []vmloop.Value, lim vmloop.Limits, budget func() int64, ans answer, maxRuns int) (diffStats, error) {
	var st diffStats
	eg, err := vmloop.NewExec(p, fn, args, lim, 1)
	if err != nil {
		return st, err
	}
	en, err := vmloop.NewExec(p, fn, args, lim, 1)
	if err != nil {
		return st, err
	}
	eg.SetNative(false)
	en.SetNative(true)
	if !en.NativeUsed() {
		return st, fmt.Errorf("native loop not in use")
	}
	for st.runs < maxRuns {
		b := budget()
		t0 := diffNow.Load()
		sg := eg.Run(b)
		tg := diffNow.Swap(t0) // the native loop reads the same times
		sn := en.Run(b)
		st.runs++
		if tn := diffNow.Load(); tn != tg {
			return st, fmt.Errorf("run %d (budget %d): time.now read %d times on the go loop, %d on the native loop",
				st.runs, b, (tg-t0)/1_000_000, (tn-t0)/1_000_000)
		}
		gf, gpc := eg.Where()
		nf, npc := en.Where()
		if sg != sn || gf != nf || gpc != npc || eg.Left() != en.Left() || eg.Reductions() != en.Reductions() {
			return st, fmt.Errorf("run %d (budget %d): go %v at %s@%d left %d red %d; native %v at %s@%d left %d red %d (go trap %v; native trap %v)",
				st.runs, b, sg, gf, gpc, eg.Left(), eg.Reductions(), sn, nf, npc, en.Left(), en.Reductions(), eg.Trap(), en.Trap())
		}
		st.sig = sg
		switch sg {
		case vmloop.SigPreempted:
			st.preempts++
			continue
		case vmloop.SigIntrinsic:
			rg, rn := *eg.Request(), *en.Request()
			if !reflect.DeepEqual(rg, rn) {
				return st, fmt.Errorf("run %d: requests differ: %+v vs %+v", st.runs, rg, rn)
			}
			ans(eg, st.intrinsics)
			ans(en, st.intrinsics)
			st.intrinsics++
			continue
		}
		st.trapStack, st.thrownStack = eg.TrapStack(), eg.ThrownStack()
		return st, diffEnd(eg, en)
	}
	return st, nil
}

// diffEnd compares how two ended tasks ended: result, thrown error, trap
// (code, message, function, pc, file, line), the call stacks of the trap
// and of the uncaught throw, and the heap bytes left.
func diffEnd(eg, en *vmloop.Exec) error {
	if !reflect.DeepEqual(eg.Result(), en.Result()) {
		return fmt.Errorf("results differ: go %v native %v", eg.Result(), en.Result())
	}
	if !reflect.DeepEqual(eg.Thrown(), en.Thrown()) {
		return fmt.Errorf("thrown differ: go %v native %v", eg.Thrown(), en.Thrown())
	}
	if eg.Trap() != en.Trap() {
		return fmt.Errorf("traps differ: go %v native %v", eg.Trap(), en.Trap())
	}
	if g, n := eg.TrapStack(), en.TrapStack(); !reflect.DeepEqual(g, n) {
		return fmt.Errorf("trap stacks differ: go (depth %d)\n%v\nnative (depth %d)\n%v", g.Depth, g, n.Depth, n)
	}
	if g, n := eg.ThrownStack(), en.ThrownStack(); !reflect.DeepEqual(g, n) {
		return fmt.Errorf("thrown stacks differ: go (depth %d)\n%v\nnative (depth %d)\n%v", g.Depth, g, n.Depth, n)
	}
	if eg.HeapBytes() != en.HeapBytes() {
		return fmt.Errorf("heap bytes differ: go %d native %d", eg.HeapBytes(), en.HeapBytes())
	}
	return nil
}

func mustProgram(t testing.TB, name, src string) *vmloop.Program {
	t.Helper()
	p, err := jasm.Assemble(name, []byte(src))
	require.NoError(t, err, "%s", name)
	require.NoError(t, vmloop.Verify(p, nil), "%s", name)
	return p
}

// ---------------------------------------------------------------------------
// Random verified programs (the idea of vmloop's interp_fuzz_test.go,
// biased to the C loop's hot subset, with exits mixed in: handle
// operations, intrinsics, throws, traps, stack growth and tail calls).

const (
	gnI  = 0  // r0-r3 i64
	gnF  = 4  // r4-r5 f64
	gnS  = 6  // r6 string
	gnB  = 7  // r7 bytes
	gnE  = 8  // r8 error
	gnW  = 9  // call window (r9, r10 arguments)
	gnNR = 12 // frame size
)

// genProgram makes 1-4 functions; function i takes i%3 i64 parameters.
func genProgram(rng *rand.Rand) *vmloop.Program {
	nf := 1 + rng.IntN(4)
	p := &vmloop.Program{
		ABI:        vmloop.ABI,
		KInt:       []int64{-1 << 63, -1, 1<<63 - 1, 64, 65, 7},
		KFlt:       []float64{0.5, -1e300, 1e300, nanF(), infF(1), infF(-1), math.Copysign(0, -1), 9.3e18, -9.3e18, 2},
		KStr:       []string{"", "ab", "boom"},
		KBytes:     [][]byte{[]byte("-12x"), []byte("\r\n")},
		Intrinsics: []vmloop.Import{{Name: "io.print_i64"}, {Name: "task.id"}},
	}
	for fi := 0; fi < nf; fi++ {
		p.Funcs = append(p.Funcs, genFunc(rng, fi, nf))
	}
	// a void function (retv), called as function nf
	p.Funcs = append(p.Funcs, vmloop.Function{Name: "v", Result: vmloop.TVoid, NRegs: 2, Code: []vmloop.Instr{
		enc(vmloop.LDI, 0, 0, 0, 1), enc(vmloop.LDI, 1, 0, 0, 2), enc(vmloop.ADD, 0, 0, 1, 0), enc(vmloop.RETV, 0, 0, 0, 0)}})
	return p
}

func nanF() float64                                         { z := 0.0; return z / z }
func infF(sign int) float64                                 { z := 0.0; return float64(sign) / z }
func nparams(fi int) int                                    { return fi % 3 }
func enc(op vmloop.Op, a, b, c uint8, d int32) vmloop.Instr { return vmloop.Encode(op, a, b, c, d) }

func genFunc(rng *rand.Rand, fi, nf int) vmloop.Function {
	ri := func() uint8 { return uint8(gnI + rng.IntN(4)) }
	rf := func() uint8 { return uint8(gnF + rng.IntN(2)) }
	np := nparams(fi)
	n := 6 + rng.IntN(40)
	var code []vmloop.Instr
	// prologue: registers not holding parameters get a value of their class
	for r := np; r < 4; r++ {
		code = append(code, enc(vmloop.LDI, uint8(r), 0, 0, int32(rng.IntN(40)-20)))
	}
	code = append(code,
		enc(vmloop.ITOF, 4, 0, 0, 0), enc(vmloop.LDF, 5, 0, 0, int32(rng.IntN(10))),
		enc(vmloop.LDS, gnS, 0, 0, 1), enc(vmloop.LDI, gnW, 0, 0, 8), enc(vmloop.BNEW, gnB, gnW, 0, 0),
		enc(vmloop.NEWERR, gnE, gnS, 0, 0))
	pro := len(code)
	target := func() int32 { return int32(pro + rng.IntN(n+1)) }
	// a counter that bounds loops: decrement r3 and branch back while > 0
	callee := func() (int, int) { g := rng.IntN(nf); return g, nparams(g) }
	rr := []vmloop.Op{vmloop.ADD, vmloop.SUB, vmloop.MUL, vmloop.DIV, vmloop.REM, vmloop.AND, vmloop.OR, vmloop.XOR,
		vmloop.SHL, vmloop.SHR, vmloop.SAR, vmloop.EQ, vmloop.NE, vmloop.LT, vmloop.LE, vmloop.GT, vmloop.GE}
	ri32 := []vmloop.Op{vmloop.ADDI, vmloop.SUBI, vmloop.MULI, vmloop.ANDI, vmloop.SHLI, vmloop.SHRI, vmloop.SARI}
	rrf := []vmloop.Op{vmloop.FADD, vmloop.FSUB, vmloop.FMUL, vmloop.FDIV}
	cmf := []vmloop.Op{vmloop.FLT, vmloop.FLE, vmloop.FEQ}
	br := []vmloop.Op{vmloop.JEQ, vmloop.JNE, vmloop.JLT, vmloop.JLE, vmloop.JGT, vmloop.JGE}
	bri := []vmloop.Op{vmloop.JEQI, vmloop.JNEI, vmloop.JLTI, vmloop.JLEI, vmloop.JGTI, vmloop.JGEI}
	imms := []int32{0, 1, -1, 63, 64, 65, -64, 1 << 30, -1 << 31, 1<<31 - 1, 3}
	for len(code) < pro+n {
		switch k := rng.IntN(40); {
		case k < 9:
			code = append(code, enc(rr[rng.IntN(len(rr))], ri(), ri(), ri(), 0))
		case k < 12:
			code = append(code, enc(ri32[rng.IntN(len(ri32))], ri(), ri(), 0, imms[rng.IntN(len(imms))]))
		case k < 14:
			code = append(code, enc(rrf[rng.IntN(len(rrf))], rf(), rf(), rf(), 0))
		case k == 14:
			code = append(code, enc(cmf[rng.IntN(len(cmf))], ri(), rf(), rf(), 0))
		case k == 15:
			code = append(code, enc(vmloop.FTOI, ri(), rf(), 0, 0), enc(vmloop.ITOF, rf(), ri(), 0, 0))
		case k == 16:
			ops := []vmloop.Op{vmloop.FNEG, vmloop.FSQRT, vmloop.MOVF}
			code = append(code, enc(ops[rng.IntN(len(ops))], rf(), rf(), 0, 0))
		case k == 17:
			ops := []vmloop.Op{vmloop.NEG, vmloop.MOVI}
			code = append(code, enc(ops[rng.IntN(len(ops))], ri(), ri(), 0, 0))
		case k == 18:
			code = append(code, enc(vmloop.LDK, ri(), 0, 0, int32(rng.IntN(6))), enc(vmloop.LDF, rf(), 0, 0, int32(rng.IntN(10))))
		case k < 22:
			code = append(code, enc(br[rng.IntN(len(br))], ri(), ri(), 0, target()))
		case k < 24:
			code = append(code, vmloop.EncodeBC(bri[rng.IntN(len(bri))], ri(), int16(rng.IntN(60)-20), target()))
		case k == 24:
			ops := []vmloop.Op{vmloop.JZ, vmloop.JNZ}
			code = append(code, enc(ops[rng.IntN(len(ops))], ri(), 0, 0, target()))
		case k == 25:
			// a bounded backward loop on r3
			code = append(code, enc(vmloop.SUBI, 3, 3, 0, 1), vmloop.EncodeBC(vmloop.JGTI, 3, 0, int32(pro+rng.IntN(len(code)-pro+1))))
		case k < 28:
			g, gp := callee()
			for i := 0; i < gp; i++ {
				code = append(code, enc(vmloop.MOVI, uint8(gnW+i), ri(), 0, 0))
			}
			code = append(code, enc(vmloop.CALL, gnW, 0, uint8(gp), int32(g)))
		case k == 28:
			code = append(code, enc(vmloop.LDI, gnW, 0, 0, int32(rng.IntN(10))), enc(vmloop.BGET, ri(), gnB, gnW, 0), enc(vmloop.BLEN, ri(), gnB, 0, 0))
		case k == 29:
			code = append(code, enc(vmloop.BSET, gnB, ri(), ri(), 0), enc(vmloop.SLEN, ri(), gnS, 0, 0))
		case k == 30:
			code = append(code, enc(vmloop.INTR, 3, 1, 1, 0), enc(vmloop.INTR, 2, 0, 0, 1))
		case k == 31:
			if rng.IntN(3) == 0 {
				code = append(code, enc(vmloop.THROW, gnE, 0, 0, 0))
			}
		case k == 32:
			code = append(code, enc(vmloop.LDS, gnS, 0, 0, int32(rng.IntN(3))), enc(vmloop.MOVR, gnS, gnS, 0, 0))
		case k == 33:
			code = append(code, enc(vmloop.NOP, 0, 0, 0, 0), enc(vmloop.ITOS, gnS, ri(), 0, 0))
			code = append(code, enc(vmloop.CALL, gnW, 0, 0, int32(nf))) // the void function
		case k == 34:
			if rng.IntN(3) == 0 {
				// a tail call ends the function
				g, gp := callee()
				for i := 0; i < gp; i++ {
					code = append(code, enc(vmloop.MOVI, uint8(gnW+i), ri(), 0, 0))
				}
				code = append(code, enc(vmloop.TAILCALL, gnW, 0, uint8(gp), int32(g)))
			}
		case k == 35:
			// a bounded byte or string primitive (ABI 1.3) on a range of
			// r9..r10, which is often out of bounds (a trap)
			code = append(code, enc(vmloop.LDI, gnW, 0, 0, int32(rng.IntN(10))), enc(vmloop.LDI, gnW+1, 0, 0, int32(rng.IntN(10))))
			rg := vmloop.EncodeD01(gnW, gnW+1)
			switch rng.IntN(7) {
			case 0:
				code = append(code, enc(vmloop.BFINDR, ri(), gnB, gnB, rg))
			case 1:
				code = append(code, enc(vmloop.BCMP, ri(), gnB, gnW, vmloop.EncodeD01(gnW+1, gnB)))
			case 2:
				code = append(code, enc(vmloop.BCASECMP, ri(), gnB, gnW, vmloop.EncodeD01(gnW+1, gnB)))
			case 3:
				code = append(code, enc(vmloop.BTOI, ri(), gnB, gnW, vmloop.EncodeD01(gnW+1, ri())))
			case 4:
				code = append(code, enc(vmloop.STOI, ri(), gnS, gnW, vmloop.EncodeD01(gnW+1, ri())))
			case 5:
				code = append(code, enc(vmloop.ITOB, ri(), gnB, gnW, vmloop.EncodeD01(ri(), 0)))
			default:
				code = append(code, enc(vmloop.LDB, gnB, 0, 0, int32(rng.IntN(2))))
			}
		default:
			code = append(code, enc(vmloop.JMP, 0, 0, 0, target()))
		}
	}
	// epilogue: fold the i64 and f64 registers into the result
	code = append(code,
		enc(vmloop.XOR, 0, 0, 1, 0), enc(vmloop.XOR, 0, 0, 2, 0), enc(vmloop.XOR, 0, 0, 3, 0),
		enc(vmloop.FTOI, 1, 4, 0, 0), enc(vmloop.XOR, 0, 0, 1, 0), enc(vmloop.FTOI, 1, 5, 0, 0), enc(vmloop.ADD, 0, 0, 1, 0),
		enc(vmloop.RET, 0, 0, 0, 0))
	params := make([]vmloop.Type, np)
	for i := range params {
		params[i] = vmloop.TI64
	}
	f := vmloop.Function{Name: fmt.Sprintf("f%d", fi), Params: params, Result: vmloop.TI64, NRegs: gnNR, Code: code}
	if rng.IntN(2) == 0 {
		l := len(code)
		s := pro + rng.IntN(l-pro-1)
		e := s + 1 + rng.IntN(l-1-s)
		tgt := e + rng.IntN(l-e)
		if s > pro && rng.IntN(2) == 0 {
			tgt = pro + rng.IntN(s-pro)
		}
		f.Handlers = []vmloop.Handler{{Start: uint32(s), End: uint32(e), Target: uint32(tgt), Reg: gnE}}
	}
	return f
}

// genArgs are the entry arguments of function 0 (no parameters).
var genArgs []vmloop.Value

// genRun runs one random program differentially with random small budgets.
func genRun(p *vmloop.Program, rng *rand.Rand) (diffStats, error) {
	lim := vmloop.Limits{MaxFrames: 1 + rng.IntN(60), MaxHeapBytes: 1 << 16}
	budget := func() int64 { return int64(1 + rng.IntN(300)) }
	if rng.IntN(4) == 0 {
		budget = func() int64 { return 25_000 }
	}
	// the region rule: 0 keeps the whole run in C; otherwise exit-dense
	// regions finish their slice in the Go loop
	vmhook.SetFallback([]int{0, 0, 4, vmhook.DefaultFallback}[rng.IntN(4)])
	defer vmhook.SetFallback(vmhook.DefaultFallback)
	seed := rng.Uint64()
	ans := func(e *vmloop.Exec, k int) { defaultAnswer(e, int(seed>>1)+k) }
	return runDiff(p, 0, genArgs, lim, budget, ans, 400)
}

// coverage records which opcodes occur in accepted programs.
type coverage [vmloop.NumOps]bool

func (c *coverage) add(p *vmloop.Program) {
	for _, f := range p.Funcs {
		for _, ins := range f.Code {
			if int(ins.Op()) < vmloop.NumOps {
				c[ins.Op()] = true
			}
		}
	}
}

func (c *coverage) report() (hotSeen, hotAll int, missingHot []string, exitsSeen []string) {
	for op := range vmloop.NumOps {
		o := vmloop.Op(op)
		if HotOp(o) || o == vmloop.LDS && false {
			hotAll++
			if c[op] {
				hotSeen++
			} else {
				missingHot = append(missingHot, o.String())
			}
		} else if c[op] {
			exitsSeen = append(exitsSeen, o.String())
		}
	}
	return
}

// TestRandomDiff runs random verified programs on both loops (FuzzNative
// is its fuzzing twin), the stacks of traps and uncaught throws in nested
// calls included.
func TestRandomDiff(t *testing.T) {
	if !Available() {
		t.Skip("C loop not compiled in")
	}
	// Under -race the detector has nothing to find in one goroutine's
	// programs and multiplies their time: unit runs the full count.
	n := 3000
	switch {
	case raceEnabled:
		n = 100
	case testing.Short():
		n = 400
	}
	rng := rand.New(rand.NewPCG(11, 12))
	var cov coverage
	accepted := 0
	var sigs [5]int
	var runs, preempts, intrinsics int
	var deepTraps, deepThrows int // ends 3+ frames deep, stacks compared
	for i := 0; i < n; i++ {
		p := genProgram(rng)
		if err := vmloop.Verify(p, nil); err != nil {
			continue
		}
		accepted++
		cov.add(p)
		st, err := genRun(p, rng)
		require.NoError(t, err, "program %d", i)
		sigs[st.sig]++
		if st.trapStack.Depth >= 3 {
			deepTraps++
		}
		if st.thrownStack.Depth >= 3 {
			deepThrows++
		}
		runs += st.runs
		preempts += st.preempts
		intrinsics += st.intrinsics
	}
	if accepted < n/5 {
		t.Errorf("only %d of %d random programs verified", accepted, n)
	}
	seen, all, missing, exits := cov.report()
	t.Logf("%d programs verified; end signals %v; %d runs, %d preemptions, %d intrinsic requests; %d traps and %d uncaught throws 3+ frames deep",
		accepted, sigs, runs, preempts, intrinsics, deepTraps, deepThrows)
	t.Logf("hot opcode coverage %d/%d (missing %v); exit opcodes generated: %v", seen, all, missing, exits)
	if len(missing) > 0 {
		t.Errorf("hot opcodes never generated: %v", missing)
	}
	if n >= 3000 && (deepTraps == 0 || deepThrows == 0) {
		t.Errorf("no stacks 3+ frames deep compared: %d traps, %d throws", deepTraps, deepThrows)
	}
}

// FuzzNative compares both loops on random verified programs from a
// fuzzed seed: go test -fuzz FuzzNative ./native
func FuzzNative(f *testing.F) {
	for i := uint64(0); i < 16; i++ {
		f.Add(i, i*31+7)
	}
	var cov coverage
	var progs int
	f.Cleanup(func() {
		if progs > 0 {
			seen, all, missing, _ := cov.report()
			f.Logf("FuzzNative: %d programs; hot opcode coverage %d/%d (missing %v)", progs, seen, all, missing)
		}
	})
	f.Fuzz(func(t *testing.T, a, b uint64) {
		if !Available() {
			t.Skip("C loop not compiled in")
		}
		rng := rand.New(rand.NewPCG(a, b))
		p := genProgram(rng)
		if vmloop.Verify(p, nil) != nil {
			return
		}
		progs++
		cov.add(p)
		_, err := genRun(p, rng)
		require.NoError(t, err)
	})
}
