package vmloop

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/vmhook"
)

// TestEventRefGeneration: an event reference is a slot of the shared
// table, no heap object and no handle table, charged objHeader as the
// event object was; freeing it makes every copy stale (the trap names an
// event reference), also once the slot is held again for a task, and it
// gives its bytes back. No task hook hears of an event.
func TestEventRefGeneration(t *testing.T) {
	refs := countRefs(t)
	var drops int
	old := vmhook.TaskDrop
	vmhook.TaskDrop = func(obj, holder any) { drops++ }
	t.Cleanup(func() { vmhook.TaskDrop = old })
	e := new(Exec)
	e.MarkTaskRecord()
	h := &e.heap
	h.init(9, boundsFor(1<<20, nil))
	ev := new(int)
	x, err := h.importShared(KindEvent, ev)
	require.NoError(t, err)
	require.True(t, IsSharedRef(x))
	require.Equal(t, KindEvent, refKind(x))
	require.Equal(t, int64(objHeader), h.bytes, "charged as an event object")
	require.Zero(t, cap(h.objs), "no handle table")
	require.Same(t, ev, h.kindRef(x, KindEvent).obj)
	require.Nil(t, h.taskRef(x))
	require.Nil(t, h.kindRef(x, KindTask))
	require.Nil(t, h.kindRef(x, KindString))
	require.Contains(t, h.explain(x, KindTask), "wrong kind: want task got event")
	require.Contains(t, h.explain(x, KindString), "wrong kind: want string got event")
	require.Zero(t, refs[ev], "an event is no task")

	require.True(t, h.release(x))
	require.Zero(t, h.bytes, "the bytes are given back")
	require.Nil(t, h.ref(x))
	require.False(t, h.release(x), "a second free")
	require.Contains(t, h.explain(x, KindEvent), "stale event reference")

	// The same slot, a generation on, for a task: x stays stale, and
	// the task reference is no event.
	task := new(int)
	y, err := h.importShared(KindTask, task)
	require.NoError(t, err)
	require.Equal(t, x>>trefSlotShift&trefSlotMask, y>>trefSlotShift&trefSlotMask, "the spare slot is reused")
	require.Nil(t, h.ref(x))
	require.Contains(t, h.explain(x, KindEvent), "stale event reference")
	require.Nil(t, h.kindRef(y, KindEvent))
	require.Contains(t, h.explain(y, KindEvent), "wrong kind: want event got task")
	require.True(t, h.release(y))
	require.Equal(t, 1, drops)

	// An event held at the heap's end is released with it, telling no
	// task hook; every reference to it is stale for the next holder.
	z, err := h.importShared(KindEvent, ev)
	require.NoError(t, err)
	e.Free()
	require.Equal(t, 1, drops, "an event's end tells TaskDrop nothing")
	require.Zero(t, refs[ev])
	g := newTestHeap(9, 1<<20)
	w, err := g.importShared(KindEvent, ev)
	require.NoError(t, err)
	require.Nil(t, g.ref(z))
	require.NotNil(t, g.ref(w))
	g.reset()
	e.DropTaskRefSlots()
	g.dropHolds(0)
}

// TestEventRefHeapLimit: an event reference takes its bytes from the heap
// limit as an event object did: a heap that cannot take them refuses the
// event (TrapHeapLimit) and holds no slot for it.
func TestEventRefHeapLimit(t *testing.T) {
	h := newTestHeap(10, 3*objHeader)
	ev := new(int)
	var xs []uint64
	for range 3 {
		x, err := h.importShared(KindEvent, ev)
		require.NoError(t, err)
		xs = append(xs, x)
	}
	_, err := h.importShared(KindEvent, ev)
	var ti TrapInfo
	require.ErrorAs(t, err, &ti)
	require.Equal(t, TrapHeapLimit, ti.Code)
	held, _ := h.taskRefs()
	require.Equal(t, 3, held)
	require.True(t, h.release(xs[1]))
	x, err := h.importShared(KindEvent, ev)
	require.NoError(t, err)
	require.Equal(t, xs[1]>>trefSlotShift&trefSlotMask, x>>trefSlotShift&trefSlotMask)
	require.Equal(t, int64(3*objHeader), h.bytes)
	h.reset()
	require.Zero(t, h.bytes)
	h.dropHolds(0)
}

// TestEventRefCopies: an event reference in a ref array and as a map
// value is exported as the event, with the size an event object had
// (Value.Size agrees with the copy's charge), and imported into another
// heap as a reference of its own; a stale one fails the export.
func TestEventRefCopies(t *testing.T) {
	h := newTestHeap(11, 1<<20)
	ev := new(int)
	x, err := h.importShared(KindEvent, ev)
	require.NoError(t, err)
	arr := h.newArray(KindArrayRef, 2)
	h.at(arr).arr()[0] = x
	h.at(arr).arr()[1] = x
	v, err := h.export(arr, 1<<20)
	require.NoError(t, err)
	require.Equal(t, KindEvent, v.arr[0].Kind())
	require.Same(t, ev, v.arr[1].ext)
	require.Equal(t, objSize("", "", 0, 2)+2*objHeader, int64(v.Size()))

	g := newTestHeap(12, 1<<20)
	y, err := g.importValue(v)
	require.NoError(t, err)
	require.Equal(t, int64(v.Size()), g.bytes, "the copy counts what the Value does: an event each reference")
	ys := g.at(y).arr()
	require.True(t, IsSharedRef(ys[0]))
	require.Same(t, ev, g.kindRef(ys[0], KindEvent).obj)
	require.Nil(t, h.ref(ys[0]), "another heap's reference")

	require.True(t, h.release(x))
	_, err = h.export(arr, 1<<20)
	require.Error(t, err)
	require.Contains(t, err.Error(), "stale event reference")
	require.NotNil(t, g.kindRef(ys[1], KindEvent), "the copy's own reference stays")
	g.reset()
	h.reset()
	g.dropHolds(0)
	h.dropHolds(0)
}

// TestRefTableKinds: task and event slots come from chunks of their own
// kind, so a spawner's task chunks are released whole when it ends while
// the events it handed out stay held; every chunk's free list agrees
// with its counts.
func TestRefTableKinds(t *testing.T) {
	countRefs(t)
	spawner := newTestHeap(13, 1<<30)
	var children []*heap
	ev := new(int)
	const n = 3 * trefChunkLen
	for range n {
		_, err := spawner.importShared(KindTask, new(int))
		require.NoError(t, err)
		c := newTestHeap(14, 1<<20)
		x, err := c.importShared(KindEvent, ev)
		require.NoError(t, err)
		children = append(children, c)
		require.NotEqual(t, x>>trefSlotShift>>trefChunkShift, spawner.ring()>>trefChunkShift, "an event in a task chunk")
	}
	checkFreeLists(t)
	before := trefTableBytes()
	spawner.dropHolds(0)
	checkFreeLists(t)
	require.LessOrEqual(t, trefTableBytes(), before-2*int64(trefChunkLen)*32, "the spawner's task chunks are released")
	for _, c := range children {
		c.reset()
		c.dropHolds(0)
	}
	checkFreeLists(t)
}

// checkFreeLists checks every made chunk's free list against its counts.
func checkFreeLists(t *testing.T) {
	tb := &trefTable
	tb.mu.Lock()
	defer tb.mu.Unlock()
	var per [2]int
	for c := range tb.free {
		if trefChunkAt(c) == nil {
			require.Zero(t, tb.free[c], "a released chunk has no free list")
			continue
		}
		f := trefFreeList(c)
		require.Len(t, f, int(tb.nfc[c]), "chunk %d", c)
		for _, s := range f {
			require.Equal(t, c, int(s>>trefChunkShift))
			require.Zero(t, trefAt(uint64(s)).word.Load()&trefHeld)
		}
		per[tb.kind[c]] += len(f)
	}
	require.Equal(t, tb.nfree, per)
}
