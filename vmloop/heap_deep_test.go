package vmloop

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// deepDepth is the nesting depth of the deep-structure tests: with the
// goroutine stack capped at lowStack, a walk that recurses per level
// (hundreds of bytes of stack each) dies of a fatal stack overflow, which
// no test can recover from; an iterative walk needs no stack per level.
const (
	deepDepth = 200_000
	lowStack  = 16 << 20
)

// lowerMaxStack caps the goroutine stack for the rest of the test.
func lowerMaxStack(t *testing.T) {
	t.Helper()
	old := debug.SetMaxStack(lowStack)
	t.Cleanup(func() { debug.SetMaxStack(old) })
}

// deepChain builds a chain of n one-element ref arrays in h, each holding
// the next (the last holds null), and returns the root.
func deepChain(t *testing.T, h *heap, n int) uint64 {
	t.Helper()
	root := h.newArray(KindArrayRef, 1)
	require.NotZero(t, root)
	prev := root
	for i := 1; i < n; i++ {
		x := h.newArray(KindArrayRef, 1)
		require.NotZero(t, x)
		h.at(prev).arr()[0] = x
		prev = x
	}
	return root
}

// deepValue is the Value of deepChain(n) built directly.
func deepValue(n int) Value {
	v := Value{kind: KindArrayRef, arr: []Value{{}}}
	for i := 1; i < n; i++ {
		v = Value{kind: KindArrayRef, arr: []Value{v}}
	}
	return v
}

// depthOf counts the levels of a chain Value without recursing.
func depthOf(v Value) int {
	n := 0
	for v.kind == KindArrayRef && len(v.arr) == 1 {
		n++
		v = v.arr[0]
	}
	return n
}

// TestDeepNestingWalks: export, import, Size, String and Equal of a chain
// of deepDepth nested arrays finish on a small goroutine stack (they
// recursed once per level and overflowed it: a fatal error of the host
// process, not a trap of the task).
func TestDeepNestingWalks(t *testing.T) {
	lowerMaxStack(t)
	h := newTestHeap(1, 1<<30)
	root := deepChain(t, h, deepDepth)
	v, err := h.export(root, h.bnd.limit)
	require.NoError(t, err)
	require.Equal(t, deepDepth, depthOf(v))

	require.Equal(t, deepDepth*(objHeader+8), v.Size())
	w := deepValue(deepDepth)
	require.True(t, v.Equal(w))
	w2 := deepValue(deepDepth - 1)
	require.False(t, v.Equal(w2))

	s := v.String()
	require.Equal(t, strings.Repeat("[", deepDepth)+"void"+strings.Repeat("]", deepDepth), s)

	h2 := newTestHeap(2, 1<<30)
	x, err := h2.importValue(v)
	require.NoError(t, err)
	require.Equal(t, deepDepth, int(h2.liveObjects()))
	back, err := h2.export(x, h2.bnd.limit)
	require.NoError(t, err)
	require.True(t, back.Equal(v))
}

// TestImportRollsBack: an import that fails part way (the heap limit, a
// bad element kind) leaves the heap as it was, so that the failure can be
// thrown to the task instead of trapping it.
func TestImportRollsBack(t *testing.T) {
	v := deepValue(1000) // 40,000 accounted bytes
	h := newTestHeap(1, 20_000)
	s := h.newString("kept")
	before, live := h.bytes, h.liveObjects()
	_, err := h.importValue(v)
	var ti TrapInfo
	require.ErrorAs(t, err, &ti)
	require.Equal(t, TrapHeapLimit, ti.Code)
	require.Equal(t, before, h.bytes)
	require.Equal(t, live, h.liveObjects())
	require.NotNil(t, h.get(s, KindString))

	bad := Value{kind: KindArrayRef, arr: []Value{Str("a"), {kind: KindArrayRef, arr: []Value{I64(1)}}}}
	_, err = h.importValue(bad)
	require.ErrorAs(t, err, &ti)
	require.Equal(t, TrapKind, ti.Code)
	require.Equal(t, before, h.bytes)
	require.Equal(t, live, h.liveObjects())
}

// TestExportSharedBudget: a DAG that shares one array many times is
// copied once per reference and bounded by the budget.
func TestExportSharedBudget(t *testing.T) {
	h := newTestHeap(1, 1<<20)
	leaf := h.newArray(KindArrayI64, 100) // 832 bytes
	top := h.newArray(KindArrayRef, 64)
	for i := range h.at(top).arr() {
		h.at(top).arr()[i] = leaf
	}
	v, err := h.export(top, 1<<20)
	require.NoError(t, err)
	require.Len(t, v.arr, 64)
	_, err = h.export(top, 10_000)
	var ti TrapInfo
	require.ErrorAs(t, err, &ti)
	require.Equal(t, TrapHeapLimit, ti.Code)
}
