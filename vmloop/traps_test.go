package vmloop

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

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
