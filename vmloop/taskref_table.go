package vmloop

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// The task reference table (taskref.go): its chunks of slots, taken and
// given back under one lock, made and released whole.

// trefTable is the table of task reference slots: chunks that never move
// while any of their slots is taken, found through a directory replaced
// whole when a chunk is made or released. A chunk none of whose slots is
// taken is released (its memory goes to the garbage collector) while a
// chunk's worth of free slots stays elsewhere, so the table holds about
// what is held at once, not the most ever held; a released chunk made
// again gives each slot the next generation it had (gens), so no
// reference to it from before matches and only a retired slot is lost.
// Takes prefer the lowest chunk, so that high ones drain.
var trefTable struct {
	dir atomic.Pointer[[]*[trefChunkLen]trefSlot] // nil entries: released
	mu  sync.Mutex
	// Per chunk, under mu: its free slots (on no ring), how many of its
	// slots are taken (held, or spare on a ring), and, while it is
	// released, each slot's next generation (trefGenMax: retired; nil for
	// a chunk never made, or one whose slots are all retired: dead).
	free  [][]uint32
	used  []int32
	gens  []*[trefChunkLen]uint16
	dead  []bool
	nfree int // free slots in all chunks
	low   int // no chunk below low has a free slot
}

// trefAt returns slot s, or nil when its chunk is not made.
func trefAt(s uint64) *trefSlot {
	d := trefTable.dir.Load()
	if d == nil || s>>trefChunkShift >= uint64(len(*d)) {
		return nil
	}
	c := (*d)[s>>trefChunkShift]
	if c == nil {
		return nil
	}
	return &c[s&trefChunkMask]
}

// trefTake takes up to n free slots, appending them to dst; it makes a
// chunk when none is free. It returns fewer when the table is full.
func trefTake(dst []uint32, n int) []uint32 {
	t := &trefTable
	t.mu.Lock()
	defer t.mu.Unlock()
	for n > 0 {
		for t.low < len(t.free) && len(t.free[t.low]) == 0 {
			t.low++
		}
		if t.low == len(t.free) && !trefMake() {
			break
		}
		c := t.low
		f := t.free[c]
		dst = append(dst, f[len(f)-1])
		t.free[c] = f[:len(f)-1]
		t.used[c]++
		t.nfree--
		n--
	}
	return dst
}

// trefMake makes the lowest released chunk that may be made again, else a
// new one (mu held); false when the table is full.
func trefMake() bool {
	t := &trefTable
	c := 0
	for c < len(t.free) && (trefChunkAt(c) != nil || t.dead[c]) {
		c++
	}
	if c == trefMaxSlots/trefChunkLen {
		return false
	}
	if c == len(t.free) {
		t.free, t.used = append(t.free, nil), append(t.used, 0)
		t.gens, t.dead = append(t.gens, nil), append(t.dead, false)
	}
	ch := new([trefChunkLen]trefSlot)
	f := t.free[c][:0]
	for i := trefChunkLen - 1; i >= 0; i-- {
		gen := uint16(0)
		if g := t.gens[c]; g != nil {
			gen = g[i]
		}
		ch[i].word.Store(uint32(gen) << 1)                           // a retired slot's word: trefGenMax<<1
		if s := c<<trefChunkShift | i; s != 0 && gen != trefGenMax { // slot 0 is not used
			f = append(f, uint32(s))
		}
	}
	t.gens[c] = nil
	t.free[c] = f
	t.nfree += len(f)
	t.low = min(t.low, c)
	trefSetChunk(c, ch)
	return true
}

// trefChunkAt returns chunk c of the directory, nil when released.
func trefChunkAt(c int) *[trefChunkLen]trefSlot {
	d := trefTable.dir.Load()
	if d == nil || c >= len(*d) {
		return nil
	}
	return (*d)[c]
}

// trefSetChunk replaces chunk c in a copy of the directory (mu held).
func trefSetChunk(c int, ch *[trefChunkLen]trefSlot) {
	var d []*[trefChunkLen]trefSlot
	if old := trefTable.dir.Load(); old != nil {
		d = append(d, *old...)
	}
	for len(d) <= c {
		d = append(d, nil)
	}
	d[c] = ch
	trefTable.dir.Store(&d)
}

// trefGive gives slots back: to their chunk's free list, or, retired (at
// the last generation), to none; a chunk none of whose slots is taken is
// released while a chunk's worth of free slots stays elsewhere.
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
		if trefAt(uint64(s)).word.Load()>>1 != trefGenMax {
			t.free[c] = append(t.free[c], s)
			t.nfree++
			t.low = min(t.low, c)
		}
	}
	for _, s := range slots {
		c := int(s >> trefChunkShift)
		if c == 0 || t.used[c] != 0 || t.nfree-len(t.free[c]) < trefChunkLen || trefChunkAt(c) == nil {
			continue
		}
		g := new([trefChunkLen]uint16)
		live := false
		ch := trefChunkAt(c)
		for i := range trefChunkLen {
			g[i] = uint16(ch[i].word.Load() >> 1) // released: the next generation
			live = live || g[i] != trefGenMax
		}
		t.gens[c], t.dead[c] = g, !live
		if !live {
			t.gens[c] = nil
		}
		t.nfree -= len(t.free[c])
		t.free[c] = nil
		trefSetChunk(c, nil)
	}
}

// trefTableBytes returns the memory of the task reference table: its
// chunks of slots, made for the references held at once (and spare on
// the rings of recycled Execs), released when none is taken.
func trefTableBytes() int64 {
	d := trefTable.dir.Load()
	if d == nil {
		return 0
	}
	n := int64(0)
	for _, c := range *d {
		if c != nil {
			n += int64(unsafe.Sizeof(*c))
		}
	}
	return n
}

// TaskRefSlotsTaken returns how many slots of the task reference table
// are taken: held by a heap, or spare on a heap's ring (a scheduler that
// has ended leaves none of its own).
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
