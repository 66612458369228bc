package vmloop

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTaskMemoryBoundedByHeapLimit: a task that, 17 times over, makes an
// 8 MiB buffer, fills its handle table with small strings until the table
// grows, and frees the buffer holds at most one buffer and the strings
// (limit 16 MiB): a freed object's memory must be garbage while the task
// lives — an outgrown object table must not keep it reachable (found by
// review: kept uncleared until the task ended, 92 MiB stayed pinned).
func TestTaskMemoryBoundedByHeapLimit(t *testing.T) {
	p := itProg(t, nil, itFn("f", "()->i64", 7, `
		ldi r0, 0; ldi r2, 1; ldi r5, 8388608; ldi r6, 17
	loop:
		bnew r1, r5
		ldi r3, 0
	inner:
		itos r4, r3
		addi r3, r3, 1
		jlt r3, r2, inner
		free r1
		add r2, r2, r2
		addi r0, r0, 1
		jlt r0, r6, loop
		ret r0`))
	const limit = 16 << 20
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	e, err := NewExec(p, 0, nil, Limits{MaxHeapBytes: limit}, 9)
	require.NoError(t, err)
	if sig := itRun(t, e, 1<<40); sig != SigCompleted {
		t.Fatalf("signal %v, trap %+v", sig, e.Trap())
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("accounted %d B (limit %d); Go heap grew %d MiB while the task is alive", e.HeapBytes(), limit, grown>>20)
	if grown > 3*limit {
		t.Errorf("a live task with %d accounted bytes (limit %d MiB) holds %d MiB of Go heap", e.HeapBytes(), limit>>20, grown>>20)
	}
	e.Free()
}

// TestRecycleKeepsBoundedStacks: a recycled Exec keeps at most
// maxRecycledFrames frames (found by review: a recursion 9,000 deep left a
// pooled Exec holding 384 KiB of frames, and pooled Execs are kept for
// the process's life).
func TestRecycleKeepsBoundedStacks(t *testing.T) {
	down := itFn("down", "(i64)->i64", 2, `
		jlti r0, 1, base
		subi r1, r0, 1
		call r1, 1, 0
		ret r1
	base:
		ret r0`)
	p := itProg(t, nil, down)
	sig, e := itCall(t, p, "down", I64(9000))
	if sig != SigCompleted {
		t.Fatalf("signal %v, trap %+v", sig, e.Trap())
	}
	e.Recycle()
	if cap(e.frames) > maxRecycledFrames || cap(e.regs) > maxRecycledRegs {
		t.Errorf("a recycled Exec keeps %d frames and %d registers (bounds %d, %d)", cap(e.frames), cap(e.regs), maxRecycledFrames, maxRecycledRegs)
	}
}
