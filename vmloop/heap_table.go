package vmloop

import (
	"math/bits"
	"sync"
	"unsafe"
)

// The object table of a heap, in two levels.
//
// The first chunkLen slots are one slice, heap.objs, that grows by
// doubling from one slot (most tasks hold a handle or two); past it the
// table is a directory of chunks of chunkLen slots (heapSide.far, whose
// entry 0 stands for the first chunk), each allocated once and never
// moved. So the table grows by at most one
// chunk's worth of work an allocation — a copy of the first chunk (at
// most chunkLen slots), a new chunk, or the directory's append (a
// pointer a chunk) — however many objects the heap holds: a table that
// doubled as one slice copied all of them in one step (4M objects: about
// 220 MiB moved between two instructions). A handle lookup in the first
// chunk is what it was; past it, it loads the directory first.
//
// Freeing the heap (reset) gives the chunks to the garbage collector (a
// few to a pool, cleared) without visiting their slots, except those of
// chunks that hold task or ext objects, whose references must be dropped
// one by one (dropTasks).

const (
	chunkShift = 12
	// chunkLen is the number of slots of a chunk (224 KiB).
	chunkLen  = 1 << chunkShift
	chunkMask = chunkLen - 1

	// maxPooledChunks is how many chunks a freed heap gives to chunkPool
	// (each cleared first); the rest go to the garbage collector.
	maxPooledChunks = 4
)

// chunkPool holds cleared chunks.
var chunkPool sync.Pool

// Large first-chunk tables are pooled by size, 2^c slots for c in
// (log2 maxRecycledObjs, maxPooledClass]: a task that fills a large table
// — one handle per spawned child, say — grows into tables that the tasks
// before it gave back when they ended, instead of allocating each one
// (fresh memory: page faults, and a GC cycle every few such tasks; a
// 10,000-task fan-out allocated 1.6 MB of tables). Smaller ones stay with
// a recycled Exec.
const maxPooledClass = chunkShift

// tablePools[c] holds cleared tables of 2^c slots, as a pointer to the
// first slot.
var tablePools [maxPooledClass + 1]sync.Pool

// pooledClass returns the pool class of a table of capacity n, if it has one.
func pooledClass(n int) (int, bool) {
	if n <= maxRecycledObjs || n > 1<<maxPooledClass || n&(n-1) != 0 {
		return 0, false
	}
	return bits.TrailingZeros(uint(n)), true
}

// takeTable returns a cleared table of n slots from the pool, or nil.
func takeTable(n int) []object {
	c, ok := pooledClass(n)
	if !ok {
		return nil
	}
	if p, _ := tablePools[c].Get().(*object); p != nil {
		return unsafe.Slice(p, n)
	}
	return nil
}

// putTable clears t and pools it if it is of a pooled size.
func putTable(t []object) {
	c, ok := pooledClass(cap(t))
	if !ok {
		return
	}
	t = t[:cap(t)]
	clear(t)
	tablePools[c].Put(&t[0])
}

// releaseTables gives the heap's retired tables, its first chunk and a
// few of its chunks to the pools (putTable keeps only pooled sizes);
// reset drops the heap's references to them.
func (h *heap) releaseTables() {
	if sd := h.ownSide(); sd != nil {
		for _, t := range sd.retired {
			putTable(t)
		}
		for c := 1; c < min(len(sd.far), 1+maxPooledChunks); c++ {
			clear(sd.far[c][:])
			chunkPool.Put(sd.far[c])
		}
	}
	putTable(h.objs)
}

// slots returns the number of slots made (the largest handle index).
func (h *heap) slots() int {
	if h.side == nil { // a heap never started
		return len(h.objs)
	}
	return len(h.objs) + int(h.side.farLen)
}

// tableSlots returns the capacity of the table in slots (what the
// engine's budget counts: Exec.stackBytes).
func (h *heap) tableSlots() int {
	if h.side == nil { // a heap never started
		return cap(h.objs)
	}
	return cap(h.objs) + max(len(h.side.far)-1, 0)*chunkLen
}

// slot returns the slot of handle index i (1 <= i <= slots()).
func (h *heap) slot(i int) *object {
	if i <= len(h.objs) {
		return &h.objs[i-1]
	}
	i--
	return &h.side.far[i>>chunkShift][i&chunkMask]
}

// farNew makes the next slot past the first chunk (which is full) and
// returns its handle index, or 0 when the table is full.
func (h *heap) farNew() int {
	sd := h.sidePart()
	if chunkLen+int(sd.farLen) >= maxObjects-1 {
		return 0
	}
	if sd.farLen&chunkMask == 0 {
		c, _ := chunkPool.Get().(*[chunkLen]object)
		if c == nil {
			c = new([chunkLen]object)
		}
		h.budget().Force(chunkLen * int64(unsafe.Sizeof(object{}))) // see Exec.stackBytes
		if len(sd.far) == 0 {
			sd.far, sd.farShared = append(sd.far, nil), append(sd.farShared, 0) // the first chunk's place
		}
		sd.far = append(sd.far, c)
		sd.farShared = append(sd.farShared, 0)
	}
	sd.farLen++
	return chunkLen + int(sd.farLen)
}

// grow doubles the first chunk, up to chunkLen slots (append's 1.25× for
// large slices would copy a table that a task fills with thousands of
// handles — one per spawned child, say — about five times its final
// size; doubling copies it about twice). Most tasks hold a handle or
// two: it starts at one.
func (h *heap) grow() {
	n := min(max(2*cap(h.objs), 1), chunkLen)
	objs := takeTable(n)
	if objs == nil {
		objs = make([]object, n)
	}
	objs = objs[:len(h.objs)]
	copy(objs, h.objs)
	h.budget().Force(int64(cap(objs)-cap(h.objs)) * int64(unsafe.Sizeof(object{}))) // see Exec.stackBytes
	if _, ok := pooledClass(cap(h.objs)); ok {
		old := h.objs[:cap(h.objs)]
		clear(old) // see heapSide.retired
		h.sidePart().retired = append(h.side.retired, old)
	}
	h.objs = objs
}

// noteShared counts d more live task, event or ext objects at handle
// index i.
func (h *heap) noteShared(i int, d int32) {
	h.shared += d
	if i > chunkLen {
		h.side.farShared[(i-1)>>chunkShift] += d
	}
}

// dropTasks tells taskRefs and ExtRefs that the heap's task and ext
// objects are gone (the heap is being freed). It visits only the chunks
// that hold some.
func (h *heap) dropTasks() {
	if h.shared == 0 {
		return
	}
	for i := range h.objs {
		o := &h.objs[i]
		noteTask(o.kind, o.x, -1)
	}
	if sd := h.ownSide(); sd != nil {
		for c, ch := range sd.far {
			if sd.farShared[c] == 0 {
				continue // and far[0], the first chunk's place
			}
			for i := range ch {
				o := &ch[i]
				noteTask(o.kind, o.x, -1)
			}
		}
	}
}

// eachSlot calls f for every slot made.
func (h *heap) eachSlot(f func(o *object)) {
	for i := range h.objs {
		f(&h.objs[i])
	}
	for i := chunkLen; i < chunkLen+int(h.side.farLen); i++ {
		f(&h.side.far[i>>chunkShift][i&chunkMask])
	}
}
