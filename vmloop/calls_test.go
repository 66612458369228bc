package vmloop

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

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
