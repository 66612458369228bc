package vmloop

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/vmhook"
)

// liveObjects counts the heap's live objects (the heap keeps no count).
func (h *heap) liveObjects() int32 {
	if h.side == nil {
		h.side = &noSide
	}
	n := int32(0)
	h.eachSlot(func(o *object) {
		if o.kind != KindVoid {
			n++
		}
	})
	return n
}

// countRefs sets vmhook.TaskRefs to count the holds of each object for
// the test.
func countRefs(t *testing.T) map[any]int {
	n := map[any]int{}
	old := vmhook.TaskRefs
	vmhook.TaskRefs = func(obj any, d int) { n[obj] += d }
	t.Cleanup(func() { vmhook.TaskRefs = old })
	return n
}

// TestTaskRefGeneration: a task reference is the slot and its
// generation; freeing it makes every copy stale, also once the slot names
// another task for the same heap or for another heap of the same owner id
// (the generation check, not the owner, tells them apart), and the task
// hook sees each hold once.
func TestTaskRefGeneration(t *testing.T) {
	refs := countRefs(t)
	h := newTestHeap(7, 1<<20)
	a, b := new(int), new(int)
	x, err := h.importShared(KindTask, a)
	require.NoError(t, err)
	require.True(t, IsSharedRef(x))
	require.Zero(t, h.bytes, "a task reference is no heap object")
	require.Same(t, a, h.taskRef(x).obj)
	require.Equal(t, 1, refs[a])
	require.True(t, h.release(x))
	require.Zero(t, refs[a])
	require.Nil(t, h.taskRef(x))
	require.False(t, h.release(x), "a second free")
	require.Contains(t, h.explain(x, KindTask), "stale task reference")

	// The same slot, a generation on, for b: x stays stale.
	y, err := h.importShared(KindTask, b)
	require.NoError(t, err)
	require.Equal(t, x>>trefSlotShift&trefSlotMask, y>>trefSlotShift&trefSlotMask, "the spare slot is reused")
	require.Nil(t, h.taskRef(x))
	require.Same(t, b, h.taskRef(y).obj)
	require.Contains(t, h.explain(y, KindString), "wrong kind: want string got task")

	// The heap ends: its slots go back to the table; another heap with
	// the same owner id takes them for a, and y stays stale for it.
	h.dropHolds(0)
	require.Zero(t, refs[b])
	g := newTestHeap(7, 1<<20)
	held := map[uint64]bool{}
	for range 64 {
		z, err := g.importShared(KindTask, a)
		require.NoError(t, err)
		held[z>>trefSlotShift&trefSlotMask] = true
	}
	require.True(t, held[y>>trefSlotShift&trefSlotMask], "the freed slot is taken again")
	require.Nil(t, g.taskRef(y))
	require.Nil(t, g.taskRef(x))
	require.Equal(t, 64, refs[a])
	hl, sp := g.taskRefs()
	require.Equal(t, 64, hl)
	require.Less(t, sp, trefBatch, "a fan-out takes slots in batches")
	g.dropHolds(0)
	require.Zero(t, refs[a])
}

// TestTaskRefRetired: a slot whose generation would wrap is retired:
// never held again, so its last reference stays stale.
func TestTaskRefRetired(t *testing.T) {
	countRefs(t)
	h := newTestHeap(3, 1<<20)
	a := new(int)
	x, err := h.importShared(KindTask, a)
	require.NoError(t, err)
	s := x >> trefSlotShift & trefSlotMask
	sl := trefAt(s)
	require.True(t, h.release(x))
	sl.word.Store((trefGenMax - 1) << trefWordShift) // its last generation
	x, err = h.importShared(KindTask, a)
	require.NoError(t, err)
	require.Equal(t, s, x>>trefSlotShift&trefSlotMask)
	require.Equal(t, uint64(trefGenMax-1), x>>trefGenShift)
	require.True(t, h.release(x))
	hl, _ := h.taskRefs()
	require.Zero(t, hl)
	for r := h.ring(); r != 0; { // the retired slot left the ring
		require.NotEqual(t, uint32(s), r)
		if r = trefAt(uint64(r)).next; r == h.ring() {
			break
		}
	}
	y, err := h.importShared(KindTask, a)
	require.NoError(t, err)
	require.NotEqual(t, s, y>>trefSlotShift&trefSlotMask)
	require.Nil(t, h.taskRef(x))
	h.dropHolds(0)
	trefTable.mu.Lock()
	defer trefTable.mu.Unlock()
	require.NotContains(t, trefFreeList(int(s>>trefChunkShift)), uint32(s))
}

// TestTaskRefInArray: a task reference stored in an array is exported
// (a copy out of the heap) as the task, and an array holding a stale one
// cannot be exported.
func TestTaskRefInArray(t *testing.T) {
	countRefs(t)
	h := newTestHeap(5, 1<<20)
	a := new(int)
	x, err := h.importShared(KindTask, a)
	require.NoError(t, err)
	arr := h.newArray(KindArrayRef, 1)
	h.at(arr).arr()[0] = x
	v, err := h.export(arr, 1<<20)
	require.NoError(t, err)
	require.Equal(t, KindTask, v.arr[0].Kind())
	require.Same(t, a, v.arr[0].ext)
	require.True(t, h.release(x))
	_, err = h.export(arr, 1<<20)
	require.Error(t, err)
	require.Contains(t, err.Error(), "stale task reference")
	h.dropHolds(0)
}

// TestTaskRefDropNamesHolder: a task reference dropped by a marked Exec
// (a scheduler task record's) is reported to TaskDrop with that Exec,
// from FREE and from the heap's end; an unmarked one to TaskRefs.
func TestTaskRefDropNamesHolder(t *testing.T) {
	refs := countRefs(t)
	var drops []any
	old := vmhook.TaskDrop
	vmhook.TaskDrop = func(obj, holder any) { drops = append(drops, holder); refs[obj]-- }
	t.Cleanup(func() { vmhook.TaskDrop = old })
	e := new(Exec)
	e.MarkTaskRecord()
	e.heap.init(4, boundsFor(1<<20, nil))
	a := new(int)
	x, err := e.heap.importShared(KindTask, a)
	require.NoError(t, err)
	_, err = e.heap.importShared(KindTask, a)
	require.NoError(t, err)
	require.Equal(t, 2, refs[a])
	require.True(t, e.heap.release(x))
	e.heap.dropHolds(trefKeep)
	require.Equal(t, []any{e, e}, drops)
	require.Zero(t, refs[a])
	e.DropTaskRefSlots()

	plain := newTestHeap(4, 1<<20)
	y, err := plain.importShared(KindTask, a)
	require.NoError(t, err)
	require.True(t, plain.release(y))
	require.Len(t, drops, 2, "an unmarked Exec's drop goes to TaskRefs")
	require.Zero(t, refs[a])
	plain.dropHolds(0)
}

// TestTaskRefTableShrinks: the slots a heap held at once go back to the
// table when it ends, and their chunks are released (all but a chunk's
// worth of free slots): the table holds about what is held at once. A
// reference into a released chunk stays stale once the chunk is made
// again (its slots start past their old generations).
func TestTaskRefTableShrinks(t *testing.T) {
	countRefs(t)
	before := trefTableBytes()
	h := newTestHeap(6, 1<<30)
	a := new(int)
	const n = 20 * trefChunkLen
	xs := make([]uint64, n)
	for i := range xs {
		x, err := h.importShared(KindTask, a)
		require.NoError(t, err)
		xs[i] = x
	}
	grown := trefTableBytes()
	require.GreaterOrEqual(t, grown-before, int64(19*trefChunkLen*int(unsafe.Sizeof(trefSlot{}))))
	h.dropHolds(0)
	require.LessOrEqual(t, trefTableBytes(), before+2*int64(unsafe.Sizeof([trefChunkLen]trefSlot{})), "released chunks")
	for _, x := range xs {
		require.Nil(t, h.taskRef(x))
	}
	// The chunks are made again for another heap of the same owner id:
	// the old references stay stale.
	g := newTestHeap(6, 1<<30)
	for range n {
		_, err := g.importShared(KindTask, a)
		require.NoError(t, err)
	}
	for _, x := range xs {
		require.Nil(t, g.taskRef(x), "%#x", x)
	}
	g.dropHolds(0)
}

// TestTaskRefRetiredSlotKeepsItsChunk: a released chunk keeps each slot's
// next generation. Made again, its slots start where they stopped, and a
// retired slot stays retired without retiring the rest of its chunk.
func TestTaskRefRetiredSlotKeepsItsChunk(t *testing.T) {
	countRefs(t)
	h := newTestHeap(7, 1<<30)
	a := new(int)
	const n = 20 * trefChunkLen
	xs := make([]uint64, n)
	for i := range xs {
		x, err := h.importShared(KindTask, a)
		require.NoError(t, err)
		xs[i] = x
	}
	// The last slot taken is in a high chunk; it is at its last
	// generation when its hold is released.
	s := xs[n-1] >> trefSlotShift & trefSlotMask
	c := int(s >> trefChunkShift)
	require.NotZero(t, c)
	trefAt(s).word.Store((trefGenMax-1)<<trefWordShift | trefHeld)
	h.dropHolds(0)
	trefTable.mu.Lock()
	require.Nil(t, trefChunkAt(c), "released")
	require.False(t, trefTable.dead[c], "one retired slot does not retire its chunk")
	require.Equal(t, uint16(trefGenMax), trefTable.gens[c][s&trefChunkMask])
	trefTable.mu.Unlock()

	g := newTestHeap(8, 1<<30)
	made := 0
	for range n {
		y, err := g.importShared(KindTask, a)
		require.NoError(t, err)
		ys := y >> trefSlotShift & trefSlotMask
		require.NotEqual(t, s, ys, "a retired slot is never held again")
		if int(ys>>trefChunkShift) == c {
			made++
			require.Less(t, y>>trefGenShift, uint64(4), "a slot starts at its own next generation, not its chunk's highest")
		}
	}
	require.Positive(t, made, "the chunk is made again")
	for _, x := range xs {
		require.Nil(t, g.taskRef(x))
	}
	g.dropHolds(0)
}

// trefFreeList returns the free slots of chunk c (mu held).
func trefFreeList(c int) []uint32 {
	var f []uint32
	for s := trefTable.free[c]; s != 0; s = trefAt(uint64(s)).next {
		f = append(f, s)
	}
	return f
}

// kindRef returns the slot of x when x is a reference of kind k (a task
// or an event) h holds, else nil (any other kind: nil).
func (h *heap) kindRef(x uint64, k Kind) *trefSlot {
	if kw := refWord(k); kw != 0 {
		return h.refOf(x, kw)
	}
	return nil
}

// taskRef is kindRef for a task reference.
func (h *heap) taskRef(x uint64) *trefSlot { return h.kindRef(x, KindTask) }

// TestTrimRingKeepsSpares: a heap that ends holding many references
// (a fan-out's spawner) gives all its slots back but trefKeep, which
// stay on its ring as spares in their order and serve its next holds
// without the table; dropping them too leaves the table as it was.
func TestTrimRingKeepsSpares(t *testing.T) {
	before := TaskRefSlotsTaken()
	h := newTestHeap(4, 1<<20)
	objs := make([]*int, 50)
	for i := range objs {
		objs[i] = new(int)
		_, err := h.importShared(KindTask, objs[i])
		require.NoError(t, err)
	}
	held, _ := h.taskRefs()
	require.Equal(t, 50, held)
	h.dropHolds(trefKeep)
	held, spare := h.taskRefs()
	require.Zero(t, held)
	require.Equal(t, trefKeep, spare)
	require.Equal(t, before+trefKeep, TaskRefSlotsTaken())
	// The ring is whole: forward and back, trefKeep slots.
	n, s := 0, h.ring()
	for {
		sl := trefAt(uint64(s))
		require.Equal(t, s, trefAt(uint64(sl.next)).prev, "slot %d's next does not point back", s)
		n++
		if s = sl.next; s == h.ring() {
			break
		}
	}
	require.Equal(t, trefKeep, n)
	// The spares serve the next holds without the table.
	for range trefKeep {
		_, err := h.importShared(KindTask, objs[0])
		require.NoError(t, err)
	}
	require.Equal(t, before+trefKeep, TaskRefSlotsTaken())
	h.dropHolds(0)
	require.Equal(t, before, TaskRefSlotsTaken())
}
