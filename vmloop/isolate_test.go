package vmloop

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestIsolate: Isolate moves the register and frame stacks of a task onto
// cache lines of their own between two Runs, keeps every value, and is a
// no-op once done; the task computes the same result. A loop over two
// registers never grows its stacks, so only Isolate can isolate them (a
// 16-byte register stack is never whole lines); fib then grows them, and
// what it grows stays isolated.
func TestIsolate(t *testing.T) {
	p := itProg(t, &Program{}, itFn("sum", "(i64)->i64", 2, `
		ldi r1, 0
		jmp test
	loop:
		add r1, r1, r0
		subi r0, r0, 1
	test:
		jgti r0, 0, loop
		ret r1`), itFib(1))
	check := func(name string, e *Exec, want int64) {
		t.Helper()
		slices := 0
		for {
			sig := e.Run(50)
			if sig != SigPreempted {
				if sig != SigCompleted || e.Result().Int() != want {
					t.Fatalf("%s with Isolate between slices: %v %v, want %d", name, sig, e.Result(), want)
				}
				break
			}
			slices++
			if slices == 1 && name == "sum" && e.Isolated() {
				t.Fatalf("sum: a %d-word register stack reported isolated", len(e.regs))
			}
			e.Isolate()
			if !e.Isolated() {
				t.Fatalf("%s, slice %d: not isolated: regs at %p (%d words), frames at %p (cap %d)", name, slices,
					unsafe.SliceData(e.regs), len(e.regs), unsafe.SliceData(e.frames), cap(e.frames))
			}
			r := unsafe.SliceData(e.regs)
			e.Isolate()
			if unsafe.SliceData(e.regs) != r {
				t.Fatalf("%s: Isolate copied an isolated register stack", name)
			}
		}
		if slices < 10 {
			t.Fatalf("%s: only %d slices: the test did not run across preemptions", name, slices)
		}
	}
	check("sum", itStart(t, p, "sum", I64(1000)), 500500)
	e := itStart(t, p, "fib", I64(15))
	check("fib", e, 610)

	// A recycled Exec keeps its isolated stacks: a Reset for a smaller
	// task and Isolate after its first slice copy nothing.
	e.Recycle()
	require.NoError(t, e.Reset(p, p.FuncIndex("sum"), []Value{I64(1000)}, DefaultLimits, 2))
	r, f := unsafe.SliceData(e.regs), unsafe.SliceData(e.frames)
	require.True(t, e.Isolated(), "a recycled Exec lost its isolated stacks at Reset")
	if sig := e.Run(50); sig != SigPreempted {
		t.Fatalf("sum: %v", sig)
	}
	e.Isolate()
	if unsafe.SliceData(e.regs) != r || unsafe.SliceData(e.frames) != f {
		t.Fatal("Isolate copied a recycled Exec's isolated stacks")
	}
	if sig := itRun(t, e, 50); sig != SigCompleted || e.Result().Int() != 500500 {
		t.Fatalf("sum after reuse: %v %v", sig, e.Result())
	}
}
