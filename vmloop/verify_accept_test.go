package vmloop

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

// vtMustVerify verifies p and checks the invariants of every accepted
// program: Blocks partition the code, costs and safe-point flags follow the
// contract, and the safe-point-free stretch is bounded by the code length.
func vtMustVerify(t *testing.T, p *Program, r Resolver) {
	t.Helper()
	require.NoError(t, Verify(p, r), "Verify")
	require.True(t, p.Verified(), "accepted program not marked verified")
	for i, imp := range p.Intrinsics {
		if imp.Resolved == nil {
			t.Errorf("import %d %q not resolved", i, imp.Name)
		}
	}
	for fi := range p.Funcs {
		vtCheckBlocks(t, &p.Funcs[fi])
	}
}

func vtCheckBlocks(t *testing.T, f *Function) {
	t.Helper()
	pc := 0
	for i, b := range f.Blocks {
		if b.Start != pc || b.End <= b.Start || b.End > len(f.Code) {
			t.Fatalf("%s: block %d [%d,%d) does not continue at %d", f.Name, i, b.Start, b.End, pc)
		}
		if b.Cost != b.End-b.Start {
			t.Errorf("%s: block %d cost %d, want %d", f.Name, i, b.Cost, b.End-b.Start)
		}
		last := f.Code[b.End-1]
		info, _ := last.Op().Info()
		want := info.Flags&FlagSafePoint != 0 || info.Flags&FlagBranch != 0 && int(last.D()) <= b.End-1
		if b.SafePoint != want {
			t.Errorf("%s: block %d SafePoint %v, want %v", f.Name, i, b.SafePoint, want)
		}
		pc = b.End
	}
	if pc != len(f.Code) {
		t.Fatalf("%s: blocks end at %d, code at %d", f.Name, pc, len(f.Code))
	}
	if c := f.MaxSafePointFreeCost(); c < 1 || c > len(f.Code) {
		t.Errorf("%s: MaxSafePointFreeCost %d outside [1,%d]", f.Name, c, len(f.Code))
	}
}

// vtFib is fib from the proposal, lowered to window calls, plus a main that
// loops over fib(0..n).
func vtFib() *Program {
	fib := vtFn("fib", vtI, TI64, 3,
		EncodeBC(JLTI, 0, 2, 7), // 0: if n < 2 goto base
		Encode(SUBI, 1, 0, 0, 1),
		Encode(CALL, 1, 0, 1, 1), // a = fib(n-1)
		Encode(SUBI, 2, 0, 0, 2),
		Encode(CALL, 2, 0, 1, 1), // b = fib(n-2); r0 and r1 are below the window
		Encode(ADD, 1, 1, 2, 0),
		Encode(RET, 1, 0, 0, 0),
		Encode(RET, 0, 0, 0, 0)) // 7: base
	main := vtFn("main", vtR, TI64, 5,
		Encode(LDI, 1, 0, 0, 0), // i
		Encode(LDI, 2, 0, 0, 0), // sum
		Encode(MOVI, 4, 1, 0, 0),
		Encode(CALL, 4, 0, 1, 1),
		Encode(ADD, 2, 2, 4, 0),
		Encode(ADDI, 1, 1, 0, 1),
		EncodeBC(JLTI, 1, 30, 2), // loop
		Encode(INTR, 2, 0, 1, 0),
		Encode(RET, 2, 0, 0, 0))
	p := vtProg(main, fib)
	return vtImports(p, "io.print_i64")
}

func TestVerifyFibAndLoop(t *testing.T) {
	p := vtFib()
	vtMustVerify(t, p, nil)
	want := []Block{
		{0, 1, 1, false}, {1, 3, 2, true}, {3, 5, 2, true}, {5, 7, 2, true}, {7, 8, 1, true},
	}
	if got := p.Funcs[1].Blocks; !reflect.DeepEqual(got, want) {
		t.Errorf("fib blocks\n got %v\nwant %v", got, want)
	}
	if in, _ := LookupIntrinsic("io.print_i64"); p.Intrinsics[0].Resolved != in {
		t.Errorf("Resolved = %p, want the central entry %p", p.Intrinsics[0].Resolved, in)
	}
}

func TestVerifyBlocksAndSafePoints(t *testing.T) {
	f := vtFn("main", nil, TI64, 3,
		Encode(LDI, 1, 0, 0, 0),
		Encode(LDI, 2, 0, 0, 10),
		Encode(ADDI, 1, 1, 0, 1), // 2: loop head
		Encode(JLT, 1, 2, 0, 2),  // backward: safe point
		Encode(JZ, 1, 0, 0, 6),   // forward: not a safe point
		Encode(YIELD, 0, 0, 0, 0),
		Encode(RET, 1, 0, 0, 0))
	p := vtProg(f)
	vtMustVerify(t, p, nil)
	want := []Block{
		{0, 2, 2, false}, {2, 4, 2, true}, {4, 5, 1, false}, {5, 6, 1, true}, {6, 7, 1, true},
	}
	if got := p.Funcs[0].Blocks; !reflect.DeepEqual(got, want) {
		t.Errorf("blocks\n got %v\nwant %v", got, want)
	}
	// 0,1,2,3 (not taken),4 (not taken),5 (yield: checked) = 6.
	if c := p.Funcs[0].MaxSafePointFreeCost(); c != 6 {
		t.Errorf("MaxSafePointFreeCost = %d, want 6", c)
	}
}

func TestVerifyNestedTryLoopingBack(t *testing.T) {
	f := vtWithHandlers(vtFn("main", nil, TI64, 3,
		Encode(LDI, 0, 0, 0, 0),
		Encode(LDI, 1, 0, 0, 3),
		Encode(ADDI, 0, 0, 0, 1), // 2: outer try [2,7)
		Encode(CALL, 2, 0, 0, 1), // 3: inner try [3,4) -> 7
		Encode(JLT, 0, 1, 0, 2),
		Encode(CALL, 2, 0, 0, 1), // 5: caught by the outer handler -> 9
		Encode(RET, 0, 0, 0, 0),
		Encode(JLT, 0, 1, 0, 2), // 7: inner handler loops back into its own range
		Encode(RET, 0, 0, 0, 0),
		Encode(ERRMSG, 2, 2, 0, 0), // 9: outer handler, r2 = error
		Encode(LDI, 0, 0, 0, -1),
		Encode(RET, 0, 0, 0, 0)),
		Handler{3, 4, 7, 2}, Handler{2, 7, 9, 2})
	p := vtProg(f, vtThrower())
	vtMustVerify(t, p, nil)
	want := []Block{
		{0, 2, 2, false}, {2, 3, 1, false}, {3, 4, 1, true}, {4, 5, 1, true}, {5, 6, 1, true},
		{6, 7, 1, true}, {7, 8, 1, true}, {8, 9, 1, true}, {9, 12, 3, true},
	}
	if got := p.Funcs[0].Blocks; !reflect.DeepEqual(got, want) {
		t.Errorf("blocks\n got %v\nwant %v", got, want)
	}
}

// TestVerifyExceptionEdgeTyping is the concurrency example of the proposal:
// registers written before the try range keep their types in the handler,
// and the handler register holds the error.
func TestVerifyExceptionEdgeTyping(t *testing.T) {
	main := vtWithHandlers(vtFn("main", vtR, TI64, 7,
		Encode(LDI, 6, 0, 0, 7),
		Encode(SPAWN, 6, 0, 1, 1),
		Encode(MOVR, 1, 6, 0, 0),
		Encode(OUTCOME, 5, 1, 0, 0),
		Encode(JOINI, 2, 1, 0, 0), // 4: try [4,5) -> 6, error in r3
		Encode(RET, 2, 0, 0, 0),
		Encode(ERRMSG, 4, 3, 0, 0), // 6: r1 (task) and r5 (outcome) are still typed
		Encode(CANCEL, 1, 0, 0, 0),
		Encode(MOVR, 6, 4, 0, 0),
		Encode(INTR, 6, 0, 1, 0),
		Encode(RET, 5, 0, 0, 0)),
		Handler{4, 5, 6, 3})
	worker := vtFn("worker", vtI, TI64, 3,
		Encode(LDS, 2, 0, 0, 0),
		Encode(NEWERR, 1, 2, 0, 0),
		Encode(THROW, 1, 0, 0, 0))
	p := vtImports(vtProg(main, worker), "io.print_str")
	vtMustVerify(t, p, nil)
}

func TestVerifyDeadCodeIsNotTyped(t *testing.T) {
	p := vtProg(vtFn("main", nil, TVoid, 1,
		Encode(RETV, 0, 0, 0, 0),
		Encode(SLEN, 0, 0, 0, 0), // unreachable: r0 was never written
		Encode(RETV, 0, 0, 0, 0)))
	vtMustVerify(t, p, nil)
	if n := len(p.Funcs[0].Blocks); n != 2 {
		t.Errorf("%d blocks, want 2", n)
	}
}

// TestVerifyEqualHandlerRanges: of two equal ranges the first listed wins, so
// the second handler's code is unreachable and not typed.
func TestVerifyEqualHandlerRanges(t *testing.T) {
	f := vtWithHandlers(vtFn("main", vtR, TI64, 2,
		Encode(LDI, 1, 0, 0, 0),
		Encode(THROW, 0, 0, 0, 0),
		Encode(RET, 1, 0, 0, 0),  // 2: first handler
		Encode(SLEN, 1, 1, 0, 0), // 3: second handler; would read an i64 as ref
		Encode(RET, 1, 0, 0, 0)),
		Handler{1, 2, 2, 0}, Handler{1, 2, 3, 0})
	vtMustVerify(t, vtProg(f), nil)
}

func TestVerifyWindows(t *testing.T) {
	// A void intr leaves its window base unchanged; a call keeps the
	// registers below its window.
	main := vtFn("main", []Type{TRef, TI64}, TRef, 3,
		Encode(INTR, 1, 0, 1, 0),
		Encode(MOVI, 2, 1, 0, 0),
		Encode(CALL, 2, 0, 1, 1),
		Encode(ADD, 1, 1, 2, 0),
		Encode(RET, 0, 0, 0, 0))
	vtMustVerify(t, vtImports(vtProg(main, vtID()), "io.print_i64"), nil)

	// A void call with no arguments may use the register just past the frame
	// as its window base: nothing is read or written there.
	v := vtFn("v", nil, TVoid, 0, Encode(RETV, 0, 0, 0, 0))
	main = vtFn("main", nil, TVoid, 0, Encode(CALL, 0, 0, 0, 1), Encode(TAILCALL, 0, 0, 0, 1))
	vtMustVerify(t, vtProg(main, v), nil)
}

func TestVerifyHostIntrinsics(t *testing.T) {
	add := &Intrinsic{ID: HostIntrinsicBase, Name: "host.add", Params: vtII, Result: TI64, Since: Version{1, 0}, IntrOK: true}
	main := vtFn("main", vtII, TI64, 2,
		Encode(INTR, 0, 0, 2, 1),
		Encode(INTR, 0, 0, 1, 0),
		Encode(RET, 0, 0, 0, 0))
	p := vtImports(vtProg(main), "io.print_i64", "host.add")
	vtMustVerify(t, p, vtResolver{"host.add": add, "io.print_i64": nil})
	if p.Intrinsics[1].Resolved != add {
		t.Error("host intrinsic not resolved to the resolver's entry")
	}
	if in, _ := LookupIntrinsic("io.print_i64"); p.Intrinsics[0].Resolved != in {
		t.Error("the central table must win over the resolver")
	}
}

// vtAllOpcodes builds a program that uses every opcode with correct types.
func vtAllOpcodes() *Program {
	var code []Instr
	emit := func(ins ...Instr) int {
		code = append(code, ins...)
		return len(code) - len(ins)
	}
	next := func() int32 { return int32(len(code) + 1) }
	// r0 args, r1 r2 i64, r3 f64, r4 string, r5 i64 scratch, r6 f64 scratch,
	// r7..r17 refs, r30 window.
	emit(Encode(NOP, 0, 0, 0, 0),
		Encode(LDI, 1, 0, 0, 5),
		Encode(LDK, 2, 0, 0, 0),
		Encode(LDF, 3, 0, 0, 0),
		Encode(LDS, 4, 0, 0, 0),
		Encode(MOVI, 5, 1, 0, 0),
		Encode(MOVF, 6, 3, 0, 0),
		Encode(MOVR, 7, 4, 0, 0))
	for _, op := range []Op{ADD, SUB, MUL, DIV, REM, AND, OR, XOR, SHL, SHR, SAR, EQ, NE, LT, LE, GT, GE} {
		emit(Encode(op, 5, 1, 2, 0))
	}
	emit(Encode(NEG, 5, 1, 0, 0))
	for _, op := range []Op{ADDI, SUBI, MULI, ANDI, SHLI, SHRI, SARI} {
		emit(Encode(op, 5, 1, 0, 3))
	}
	for _, op := range []Op{FADD, FSUB, FMUL, FDIV} {
		emit(Encode(op, 6, 3, 3, 0))
	}
	for _, op := range []Op{FLT, FLE, FEQ} {
		emit(Encode(op, 5, 3, 3, 0))
	}
	emit(Encode(FNEG, 6, 3, 0, 0), Encode(FSQRT, 6, 3, 0, 0), Encode(ITOF, 6, 1, 0, 0), Encode(FTOI, 5, 3, 0, 0))
	emit(Encode(JMP, 0, 0, 0, next()))
	emit(Encode(JZ, 1, 0, 0, next()))
	emit(Encode(JNZ, 1, 0, 0, next()))
	for _, op := range []Op{JEQ, JNE, JLT, JLE, JGT, JGE} {
		emit(Encode(op, 1, 2, 0, next()))
	}
	for _, op := range []Op{JEQI, JNEI, JLTI, JLEI, JGTI, JGEI} {
		emit(EncodeBC(op, 1, -7, next()))
	}
	emit(Encode(NEWERR, 8, 4, 0, 0), Encode(ERRMSG, 9, 8, 0, 0), Encode(ERRKIND, 9, 8, 0, 0))
	emit(Encode(SLEN, 5, 4, 0, 0), Encode(SCONCAT, 9, 4, 4, 0), Encode(SEQ, 5, 4, 4, 0),
		Encode(ITOS, 9, 1, 0, 0), Encode(STOB, 10, 4, 0, 0), Encode(BTOS, 9, 10, 0, 0))
	emit(Encode(BNEW, 10, 1, 0, 0), Encode(BLEN, 5, 10, 0, 0), Encode(BGET, 5, 10, 1, 0),
		Encode(BSET, 10, 1, 1, 0), Encode(BCOPY, 10, 1, 10, EncodeD01(1, 2)),
		Encode(BSLICE, 11, 10, 1, EncodeD01(2, 0)), Encode(BFIND, 5, 10, 10, EncodeD01(1, 0)),
		Encode(BEQ, 5, 10, 11, 0))
	emit(Encode(BFINDR, 5, 10, 11, EncodeD01(1, 2)), Encode(BCMP, 5, 10, 1, EncodeD01(2, 11)),
		Encode(BCASECMP, 5, 10, 1, EncodeD01(2, 11)), Encode(BTOI, 5, 10, 1, EncodeD01(2, 2)),
		Encode(STOI, 5, 4, 1, EncodeD01(2, 2)), Encode(ITOB, 5, 10, 1, EncodeD01(2, 0)), Encode(LDB, 10, 0, 0, 0))
	emit(Encode(ANEW, 12, 1, uint8(TI64), 0), Encode(ALEN, 5, 12, 0, 0), Encode(AGETI, 5, 12, 1, 0), Encode(ASETI, 12, 1, 1, 0),
		Encode(ANEW, 13, 1, uint8(TF64), 0), Encode(AGETF, 6, 13, 1, 0), Encode(ASETF, 13, 1, 3, 0),
		Encode(ANEW, 14, 1, uint8(TRef), 0), Encode(AGETR, 9, 14, 1, 0), Encode(ASETR, 14, 1, 4, 0))
	emit(Encode(MOVI, 30, 1, 0, 0), Encode(SPAWN, 30, 0, 1, 1), Encode(MOVR, 15, 30, 0, 0))
	emit(Encode(JOINI, 5, 15, 0, 0), Encode(JOINF, 6, 15, 0, 0), Encode(JOINR, 9, 15, 0, 0),
		Encode(JOINV, 15, 0, 0, 0), Encode(OUTCOME, 5, 15, 0, 0), Encode(YIELD, 0, 0, 0, 0),
		Encode(CANCEL, 15, 0, 0, 0), Encode(CANCELLED, 5, 0, 0, 0), Encode(EVNEW, 16, 0, 0, 0),
		Encode(EVWAIT, 16, 0, 0, 0), Encode(EVSIGNAL, 16, 0, 0, 0), Encode(EVBCAST, 16, 0, 0, 0))
	emit(Encode(MOVI, 30, 1, 0, 0), Encode(INTR, 30, 0, 1, 0), Encode(INTR, 30, 0, 0, 1))
	emit(Encode(MOVI, 30, 1, 0, 0), Encode(CALL, 30, 0, 1, 1), Encode(CALL, 30, 0, 0, 2))
	emit(Encode(FREE, 9, 0, 0, 0))
	retAt := len(code) + 2
	emit(Encode(JNZ, 1, 0, 0, int32(retAt)))
	throwAt := emit(Encode(THROW, 8, 0, 0, 0))
	emit(Encode(RET, 1, 0, 0, 0))
	handler := emit(Encode(ERRMSG, 9, 17, 0, 0), Encode(MOVI, 30, 1, 0, 0), Encode(TAILCALL, 30, 0, 1, 1))
	main := vtWithHandlers(vtFn("main", vtR, TI64, 31, code...),
		Handler{uint32(throwAt), uint32(throwAt + 1), uint32(handler), 17})
	v := vtFn("v", nil, TVoid, 0, Encode(RETV, 0, 0, 0, 0))
	p := vtImports(vtProg(main, vtID(), v), "io.print_i64", "task.id")
	p.KInt = []int64{1 << 40}
	p.KFlt = []float64{2.5}
	p.KBytes = [][]byte{[]byte("x")}
	return p
}

func TestVerifyAllOpcodes(t *testing.T) {
	p := vtAllOpcodes()
	used := make([]bool, NumOps)
	for _, f := range p.Funcs {
		for _, ins := range f.Code {
			used[ins.Op()] = true
		}
	}
	for op, u := range used {
		if !u {
			t.Errorf("opcode %s not exercised", Op(op))
		}
	}
	vtMustVerify(t, p, nil)
}
