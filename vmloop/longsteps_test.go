package vmloop

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// stepWork runs e to its end with a budget of 1 per Run, so that every Run
// stops at the first safe point or chunk boundary, and returns the largest
// number of reductions one Run used (the work done between two safe
// points) and the total.
//
// The Runs at the entry function's RET are left out of most: they copy a
// reference result out of the heap, in steps of their own (copyStep:
// TestResultExportInSteps), charged to the task.
func stepWork(t *testing.T, e *Exec) (most, total uint64) {
	t.Helper()
	for i := 0; ; i++ {
		before := e.Reductions()
		atRet := e.fp == 0 && e.prog.Funcs[e.frames[0].fn].Code[e.frames[0].pc].Op() == RET
		sig := e.Run(1)
		if !atRet {
			most = max(most, e.Reductions()-before)
		}
		if sig != SigPreempted {
			return most, e.Reductions()
		}
		require.Less(t, i, 10_000_000, "still running")
	}
}

// longLimits holds a 32 MiB source and a 32 MiB result with room to spare.
var longLimits = Limits{MaxHeapBytes: 256 << 20}

// chunkWork is the most work one chunk of a byte-sized bulk instruction may
// do between two looks at the budget, plus the few instructions around it.
const chunkWork = bulkChunk/64 + 16

// TestLongStepsAreChunked: each allocating instruction over longN bytes costs
// ceil(n/64) for its n bytes and stops at least every 64 KiB (1,024
// reductions) when the budget is spent, and gives the same result and
// cost as in one slice.
func TestLongStepsAreChunked(t *testing.T) {
	const n = longN
	p := itProg(t, nil,
		itFn("sconcat", "(ref,ref)->ref", 3, "sconcat r2, r0, r1; ret r2"),
		itFn("stob", "(ref)->ref", 2, "stob r1, r0; ret r1"),
		itFn("btos", "(ref)->ref", 2, "btos r1, r0; ret r1"),
		itFn("bslice", "(ref)->ref", 4, "ldi r1, 1; blen r2, r0; bslice r3, r0, r1, r2; ret r3"),
		itFn("bnew", "(i64)->ref", 2, "bnew r1, r0; ret r1"),
		itFn("anew", "(i64)->ref", 2, "anew r1, r0, i64; ret r1"),
		itFn("anewr", "(i64)->ref", 2, "anew r1, r0, ref; ret r1"),
	)
	half := strings.Repeat("ab", n/4)
	raw := []byte(strings.Repeat("xyz", n/3+1)[:n])
	for _, c := range []struct {
		fn   string
		args []Value
		cost uint64 // the size-dependent part
		want func(v Value)
	}{
		{"sconcat", []Value{Str(half), Str(half + "!")}, (n + 1 + 63) / 64, func(v Value) {
			require.Equal(t, half+half+"!", v.str)
		}},
		{"stob", []Value{Str(string(raw))}, n / 64, func(v Value) { require.Equal(t, raw, v.BytesData()) }},
		{"btos", []Value{Bytes(raw)}, n / 64, func(v Value) { require.Equal(t, string(raw), v.str) }},
		{"bslice", []Value{Bytes(raw)}, (n - 1 + 63) / 64, func(v Value) { require.Equal(t, raw[1:], v.BytesData()) }},
		{"bnew", []Value{I64(n)}, n / 64, func(v Value) { require.Equal(t, make([]byte, n), v.BytesData()) }},
		{"anew", []Value{I64(n / 8)}, n / 64, func(v Value) {
			require.Equal(t, n/8, v.Len())
			require.Equal(t, uint64(0), v.nums()[n/8-1])
		}},
		{"anewr", []Value{I64(n / 8)}, n / 64, func(v Value) {
			require.Equal(t, n/8, v.Len())
			require.Equal(t, KindVoid, v.arr[n/8-1].Kind())
		}},
	} {
		t.Run(c.fn, func(t *testing.T) {
			e, err := NewExec(p, p.FuncIndex(c.fn), c.args, longLimits, 1)
			require.NoError(t, err)
			most, total := stepWork(t, e)
			require.Equal(t, SigCompleted, e.Run(1), "trap: %v", e.Trap())
			require.LessOrEqual(t, most, uint64(chunkWork), "work between two safe points")
			require.GreaterOrEqual(t, total, c.cost, "a %d-byte %s is charged its bytes", n, c.fn)
			c.want(e.Result())

			// one slice: the same cost and result
			e2, err := NewExec(p, p.FuncIndex(c.fn), c.args, longLimits, 1)
			require.NoError(t, err)
			require.Equal(t, SigCompleted, e2.Run(1<<40))
			require.Equal(t, total, e2.Reductions())
			require.True(t, e.Result().Equal(e2.Result()))
		})
	}
}

// TestChunkedAllocHoldsHeap: between two chunks the destination's size is
// counted in the heap, and one that does not fit traps before any work.
func TestChunkedAllocHoldsHeap(t *testing.T) {
	const n = 4 << 20
	p := itProg(t, nil, itFn("bnew", "(i64)->ref", 2, "bnew r1, r0; ret r1"))
	e, err := NewExec(p, 0, []Value{I64(n)}, longLimits, 1)
	require.NoError(t, err)
	require.Equal(t, SigPreempted, e.Run(1))
	require.Equal(t, int64(objHeader+n), e.HeapBytes(), "reserved while in progress")
	require.Equal(t, SigCompleted, itRun(t, e, 1))
	require.Equal(t, n, len(e.Result().BytesData()))

	e, err = NewExec(p, 0, []Value{I64(n)}, Limits{MaxHeapBytes: n}, 1)
	require.NoError(t, err)
	require.Equal(t, SigTrapped, e.Run(1))
	require.Equal(t, TrapHeapLimit, e.Trap().Code)
	require.Equal(t, uint64(1), e.Reductions(), "refused before any chunk")
}

// refTree is a ref array of k ref arrays of m null elements each.
func refTree(t *testing.T, k, m int) Value {
	t.Helper()
	inner := make([]Value, k)
	for i := range inner {
		a, err := Array(KindArrayRef, make([]Value, m)...)
		require.NoError(t, err)
		inner[i] = a
	}
	v, err := Array(KindArrayRef, inner...)
	require.NoError(t, err)
	return v
}

// TestCycleCheckChunked: the cycle check of asetr costs one reduction per
// element visited and stops every walkChunk elements, inside one array
// too; a cycle found after a resumption still traps at the asetr.
func TestCycleCheckChunked(t *testing.T) {
	p := itProg(t, nil,
		// store(x): a fresh one-element ref array takes x
		itFn("store", "(ref)->i64", 3, "ldi r1, 1; anew r2, r1, ref; ldi r1, 0; asetr r2, r1, r0; ret r1"),
		// cycle(x): x[0] takes x (x[0] is visited last)
		itFn("cycle", "(ref)->i64", 3, "ldi r1, 0; agetr r2, r0, r1; asetr r2, r1, r0; ret r1"),
	)
	for _, c := range []struct {
		name string
		arg  Value
		seen uint64 // elements the walk visits
	}{
		{"tree", refTree(t, 1024, 1024), 1024 + 1024*1024},
		{"one array", refTree(t, 1, 1<<20), 1 + 1<<20},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := itStart(t, p, "store", c.arg)
			most, total := stepWork(t, e)
			require.Equal(t, SigCompleted, e.Run(1), "trap: %v", e.Trap())
			require.LessOrEqual(t, most, uint64(walkCharge(walkChunk)+16), "work between two safe points")
			require.GreaterOrEqual(t, total, c.seen, "charged per element visited")
			e2 := itStart(t, p, "store", c.arg)
			require.Equal(t, SigCompleted, e2.Run(1<<40))
			require.Equal(t, total, e2.Reductions())
		})
	}
	e := itStart(t, p, "cycle", refTree(t, 1024, 1024))
	slices := 0
	for e.Run(1) == SigPreempted {
		slices++
	}
	require.Equal(t, SigTrapped, e.Run(1))
	require.Equal(t, TrapHandle, e.Trap().Code)
	require.Contains(t, e.Trap().Msg, "acyclic")
	require.Equal(t, 2, e.Trap().PC)
	require.Greater(t, slices, 100, "the walk was resumed")
}

// TestThrowChargesFrames: a throw caught 9,000 frames up costs at least one
// reduction per frame it unwinds.
func TestThrowChargesFrames(t *testing.T) {
	const depth = 9000
	p := itProg(t, &Program{KStr: []string{"deep"}},
		itFn("top", "(i64)->i64", 2, `
		t0:
			movi r1, r0
			call r1, 1, 1
		t1:
			ret r1
		h:
			ldi r0, -1
			ret r0`, "t0,t1,h,r1"),
		itFn("down", "(i64)->i64", 2, `
			jz r0, bottom
			subi r0, r0, 1
			call r0, 1, 1
			ret r0
		bottom:
			lds r1, 0
			newerr r1, r1
			throw r1`),
	)
	e := itStart(t, p, "top", I64(depth))
	for e.fp < depth+1 {
		require.Equal(t, SigPreempted, e.Run(1))
	}
	before := e.Reductions()
	require.Equal(t, SigCompleted, e.Run(1<<40))
	require.Equal(t, int64(-1), e.Result().Int())
	// jz, lds, newerr, throw, ldi, ret and one per frame of down (depth+1)
	require.Equal(t, uint64(6+depth+1), e.Reductions()-before)
}
