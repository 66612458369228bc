package vmloop

import (
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// extCounter counts its heap objects (ExtRefs).
type extCounter struct{ n int }

func (c *extCounter) ExtRef(d int) { c.n += d }

// manyObjects is the heap size of the table tests: 4M objects.
const manyObjects = 4 << 20

// TestHeapTableNeverMoves: a heap growing to 4M objects never moves an
// object past the table's first chunk, and the first chunk stops at
// chunkLen slots, so one allocation copies at most chunkLen slots (the
// table used to double as one slice: the allocation that took it from
// 2M to 4M slots copied 112 MiB). Handles stay checked: every one still
// names its object, a freed one is stale, and one past the last slot is
// invalid.
func TestHeapTableNeverMoves(t *testing.T) {
	if testing.Short() {
		t.Skip("4M objects (about 400 MB)")
	}
	b := NewBudget(1 << 40)
	e, err := NewExec(itProg(t, nil, itFn("f", "()->i64", 1, "ldi r0, 0; ret r0")), 0, nil, Limits{MaxHeapBytes: 1 << 40, Memory: b}, 3)
	require.NoError(t, err)
	h := &e.heap
	type seen struct {
		x uint64
		o *object
	}
	var marks []seen
	var most time.Duration
	for i := range manyObjects {
		t0 := time.Now()
		x := h.newArray(KindArrayI64, 0)
		if d := time.Since(t0); d > most {
			most = d
		}
		if x == 0 {
			t.Fatalf("allocation %d failed", i)
		}
		if i%4093 == 0 {
			marks = append(marks, seen{x, h.at(x)})
		}
	}
	t.Logf("longest allocation of %d: %v", manyObjects, most)
	require.LessOrEqual(t, cap(h.objs), chunkLen, "the first chunk is bounded")
	for _, m := range marks {
		require.NotNil(t, h.getLive(m.x), "handle %#x", m.x)
		if m.x&handleIdxMask > chunkLen {
			require.Same(t, m.o, h.getLive(m.x), "an object past the first chunk never moves")
		}
	}
	last := marks[len(marks)-1].x
	require.True(t, h.release(last))
	require.Nil(t, h.getLive(last), "stale")
	require.Contains(t, h.explain(last, KindVoid), "stale handle")
	past := uint64(h.owner)<<handleOwnerShift | 1<<handleGenShift | uint64(h.slots()+1)
	require.Nil(t, h.getLive(past))
	require.Contains(t, h.explain(past, KindVoid), "invalid handle")
	require.Equal(t, h.at(last), h.slot(int(h.free)), "the freed slot is reused first")
	require.Equal(t, overGrant(int64(cap(e.regs))*8+int64(cap(e.frames))*int64(unsafe.Sizeof(frame{})))+int64(h.tableSlots())*int64(unsafe.Sizeof(object{})), e.stackBytes(cap(e.regs), cap(e.frames)), "the table counted whole")
	e.Free()
	require.Zero(t, b.Used(), "the budget balances")
}

// TestHeapFreeDropsChunks: freeing a heap of 4M objects visits only the
// chunks that hold task or ext objects (their references are dropped) and
// gives the objects' budget back in one subtraction; the table's chunks
// go to the garbage collector unvisited (a few to the pool, cleared).
func TestHeapFreeDropsChunks(t *testing.T) {
	if testing.Short() {
		t.Skip("4M objects (about 400 MB)")
	}
	b := NewBudget(1 << 40)
	e, err := NewExec(itProg(t, nil, itFn("f", "()->i64", 1, "ldi r0, 0; ret r0")), 0, nil, Limits{MaxHeapBytes: 1 << 40, Memory: b}, 3)
	require.NoError(t, err)
	h := &e.heap
	c := new(extCounter)
	require.NotZero(t, h.newExt(KindExt, c)) // in the first chunk
	for range manyObjects {
		if h.newArray(KindArrayI64, 0) == 0 {
			t.Fatal("allocation failed")
		}
	}
	mid := h.newExt(KindExt, c) // in the last chunk
	require.NotZero(t, h.newExt(KindExt, c))
	require.True(t, h.release(mid))
	require.Equal(t, 2, c.n)
	require.Equal(t, int32(2), h.shared)
	sd := h.side
	last := h.at(mid + 1)
	var plain *object // an object of a chunk without ext objects, past the pooled ones
	for i, n := range sd.farShared {
		if n == 0 && i > maxPooledChunks { // far[1..maxPooledChunks] go to the pool
			plain = &sd.far[i][0]
			break
		}
	}
	require.NotNil(t, plain)
	t0 := time.Now()
	e.Free()
	t.Logf("free of %d objects: %v", manyObjects, time.Since(t0))
	require.Zero(t, c.n, "every ext reference dropped")
	require.Zero(t, b.Used(), "the budget balances")
	require.Equal(t, KindArrayI64, plain.kind, "a chunk without task or ext objects is not visited")
	require.Equal(t, KindExt, last.kind)
}
