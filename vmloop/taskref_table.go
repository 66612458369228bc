package vmloop

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// The shared reference table (taskref.go: task and event references):
// its chunks of slots, taken and given back under one lock, made and
// released whole.

// trefTable is the table of shared reference slots: chunks that never move
// while any of their slots is taken, found through a fixed directory
// (64 KiB, one pointer a chunk: a use reads its chunk with one load and no
// bound check) whose entries are set when a chunk is made or released. A
// chunk none of whose slots is
// taken is released (its memory goes to the garbage collector) while a
// chunk's worth of free slots stays elsewhere, so the table holds about
// what is held at once, not the most ever held; a released chunk made
// again gives each slot the next generation it had (gens), so no
// reference to it from before matches and only a retired slot is lost.
// Takes prefer the lowest chunk, so that high ones drain.
//
// A chunk serves one kind of reference while it is made: task slots are
// taken from task chunks, event slots from event chunks. A heap's
// references of one kind tend to end together (a spawner's children's
// when it ends; the events its children were given, when they do), so
// the chunks of a spawner that ended are released whole even while the
// events it handed out are held: a parked task costs its event's slot,
// not a chunk kept for it and half empty. (A spare slot on a heap's ring
// is held again for either kind.)
var trefTable struct {
	dir [trefDirLen]unsafe.Pointer // *[trefChunkLen]trefSlot, atomic; nil: not made, or released
	mu  sync.Mutex
	// Per chunk, under mu: its free slots (on no ring: a list linked
	// through their next fields, free the first, 0 none) and how many,
	// how many of its slots are taken (held, or spare on a ring), the
	// kind it serves
	// while made (trefKindTask or trefKindEvent), and, while it is
	// released, each slot's next generation (trefGenMax: retired; nil for
	// a chunk never made, or one whose slots are all retired: dead).
	free []uint32
	nfc  []int32
	used []int32
	kind []uint8
	gens []*[trefChunkLen]uint16
	dead []bool
	// Per kind: the free slots in its chunks, and low: no chunk of the
	// kind below low has a free slot.
	nfree [2]int
	low   [2]int
}

// The kinds of chunk (trefTable.kind).
const (
	trefKindTask  = 0
	trefKindEvent = 1
)

// trefAt returns slot s, or nil when its chunk is not made.
func trefAt(s uint64) *trefSlot {
	c := (*[trefChunkLen]trefSlot)(atomic.LoadPointer(&trefTable.dir[s>>trefChunkShift&(trefDirLen-1)]))
	if c == nil {
		return nil
	}
	return &c[s&trefChunkMask]
}

// trefTake takes up to n free slots of chunks of kind k, appending them
// to dst; it makes a chunk when none is free. It returns fewer when the
// table is full.
func trefTake(dst []uint32, n int, k uint8) []uint32 {
	t := &trefTable
	t.mu.Lock()
	defer t.mu.Unlock()
	for n > 0 {
		c := t.low[k]
		for c < len(t.free) && (t.free[c] == 0 || t.kind[c] != k) {
			c++
		}
		t.low[k] = c
		if c == len(t.free) {
			if !trefMake(k) {
				break
			}
			continue
		}
		s := t.free[c]
		sl := trefAt(uint64(s))
		dst = append(dst, s)
		t.free[c], sl.next = sl.next, 0
		t.nfc[c]--
		t.used[c]++
		t.nfree[k]--
		n--
	}
	return dst
}

// trefMake makes the lowest released chunk that may be made again, else a
// new one, for kind k (mu held); false when the table is full.
func trefMake(k uint8) bool {
	t := &trefTable
	c := 0
	for c < len(t.free) && (trefChunkAt(c) != nil || t.dead[c]) {
		c++
	}
	if c == trefMaxSlots/trefChunkLen {
		return false
	}
	if c == len(t.free) {
		t.free, t.nfc = append(t.free, 0), append(t.nfc, 0)
		t.used, t.kind = append(t.used, 0), append(t.kind, 0)
		t.gens, t.dead = append(t.gens, nil), append(t.dead, false)
	}
	ch := new([trefChunkLen]trefSlot)
	head, n := uint32(0), int32(0)
	for i := trefChunkLen - 1; i >= 0; i-- { // the lowest first
		gen := uint16(0)
		if g := t.gens[c]; g != nil {
			gen = g[i]
		}
		// A plain store: nothing else can see ch until trefSetChunk
		// publishes it (an atomic store each was a locked instruction a
		// slot, BenchmarkSpawnMany).
		*(*uint32)(unsafe.Pointer(&ch[i].word)) = uint32(gen) << trefWordShift // a retired slot's word: trefGenMax<<2
		if s := c<<trefChunkShift | i; s != 0 && gen != trefGenMax {           // slot 0 is not used
			ch[i].next, head = head, uint32(s)
			n++
		}
	}
	t.gens[c] = nil
	t.free[c], t.nfc[c] = head, n
	t.kind[c] = k
	t.nfree[k] += int(n)
	t.low[k] = min(t.low[k], c)
	trefSetChunk(c, ch)
	return true
}

// trefChunkAt returns chunk c of the directory, nil when released.
func trefChunkAt(c int) *[trefChunkLen]trefSlot {
	return (*[trefChunkLen]trefSlot)(atomic.LoadPointer(&trefTable.dir[c]))
}

// trefSetChunk sets chunk c of the directory (mu held).
func trefSetChunk(c int, ch *[trefChunkLen]trefSlot) {
	atomic.StorePointer(&trefTable.dir[c], unsafe.Pointer(ch))
}

// trefGive gives slots back: to their chunk's free list, or, retired (at
// the last generation), to none; a chunk none of whose slots is taken is
// released while a chunk's worth of free slots of its kind stays
// elsewhere.
func trefGive(slots []uint32) {
	if len(slots) == 0 {
		return
	}
	t := &trefTable
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range slots {
		c := int(s >> trefChunkShift)
		t.used[c]--
		if sl := trefAt(uint64(s)); sl.word.Load()>>trefWordShift != trefGenMax {
			k := t.kind[c]
			sl.next, t.free[c] = t.free[c], s
			t.nfc[c]++
			t.nfree[k]++
			t.low[k] = min(t.low[k], c)
		}
	}
	last := -1
	for _, s := range slots {
		c := int(s >> trefChunkShift)
		if c == last {
			continue // looked at: slots come in runs of one chunk (a ring's order)
		}
		last = c
		if c == 0 || t.used[c] != 0 || trefChunkAt(c) == nil || t.nfree[t.kind[c]]-int(t.nfc[c]) < trefChunkLen {
			continue
		}
		g := new([trefChunkLen]uint16)
		live := false
		ch := trefChunkAt(c)
		for i := range trefChunkLen {
			g[i] = uint16(ch[i].word.Load() >> trefWordShift) // released: the next generation
			live = live || g[i] != trefGenMax
		}
		t.gens[c], t.dead[c] = g, !live
		if !live {
			t.gens[c] = nil
		}
		t.nfree[t.kind[c]] -= int(t.nfc[c])
		t.free[c], t.nfc[c] = 0, 0
		trefSetChunk(c, nil)
	}
}

// trefTableBytes returns the memory of the shared reference table: its
// chunks of slots, made for the references held at once (and spare on
// the rings of recycled Execs), released when none is taken.
func trefTableBytes() int64 {
	n := int64(0)
	for c := range trefTable.dir {
		if ch := trefChunkAt(c); ch != nil {
			n += int64(unsafe.Sizeof(*ch))
		}
	}
	return n
}

// TaskRefSlotsTaken returns how many slots of the shared reference table
// (task and event references) are taken: held by a heap, or spare on a
// heap's ring (a scheduler that has ended leaves none of its own).
func TaskRefSlotsTaken() int {
	t := &trefTable
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, u := range t.used {
		n += int(u)
	}
	return n
}
