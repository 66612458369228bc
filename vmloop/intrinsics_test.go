package vmloop

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

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
