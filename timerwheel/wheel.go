package timerwheel

import (
	"math/bits"
	"sync/atomic"
)

// Wheel is one shard of a hierarchical timer wheel. It has no goroutine, no
// lock and never reads a clock: the owner passes times in.
//
// Ownership: every method except CancelRemote must be called by the shard's
// owner (one worker) only. CancelRemote is safe from any goroutine at any
// time. See the package documentation for the scheme.
type Wheel struct {
	slab slab // ends with the remote-read page directory

	// cancelTop is the remote-cancel stack: index+1 of its top entry, 0 when
	// empty. Pushed by any goroutine, swapped out whole by the owner.
	cancelTop atomic.Uint32
	_         [cacheLinePad]byte

	heads []int32  // slot list heads, level*slots + slot
	occ   []uint64 // occupancy bitmap per level

	levels   uint
	slotBits uint   // log2(SlotsPerLevel)
	slots    uint64 // SlotsPerLevel
	slotMask uint64
	fullMask uint64 // low `slots` bits set
	levelOf  [64]uint8

	tickNs  uint64
	origin  int64  // clock value of tick 0
	elapsed uint64 // current tick E: every pending entry is filed relative to E
	now     int64  // latest time passed to Advance
	span    uint64 // slots^levels ticks
	topSize uint64 // ticks per top-level slot

	seq    uint64
	parked int // linked entries with entry.parked set
	live   int // pending entries, including remote-cancelled ones not yet drained

	// Cached NextDeadline: nextOK says `next` is valid; empty says the wheel
	// had no entries when it was computed.
	next   int64
	nextOK bool
	empty  bool

	scratch []dueRec
	// cancelled holds the payloads of remotely cancelled entries drained
	// and not yet taken with TakeCancelled.
	cancelled []uint64

	stats Stats
}

// dueRec is a due entry collected by Advance, sorted before delivery.
type dueRec struct {
	deadline int64
	seq      uint64
	idx      uint32
	gen      uint32
}

// Expired describes one fired timer, as appended by Advance.
type Expired struct {
	Deadline int64  // the entry's exact deadline
	Payload  uint64 // the payload given to Insert
	Handle   Handle // the (now stale) handle Insert returned
}

// Stats are monotonic counters of one shard plus two gauges. Owner only.
type Stats struct {
	Inserts       uint64 // Insert calls
	Resets        uint64 // successful Reset calls
	Cancels       uint64 // successful Cancel calls plus drained CancelRemote ones
	RemoteCancels uint64 // successful CancelRemote calls drained so far
	Fires         uint64 // entries delivered by Advance
	Cascades      uint64 // entry moves from a level > 0 slot to a lower one (or re-filing in the top level)
	SlotScans     uint64 // slot lists walked by NextDeadline to find the exact minimum
	ScanSteps     uint64 // entries visited by those walks
	Pending       int    // gauge: entries pending now
	SlabEntries   int    // gauge: entries ever allocated (the slab's high-water mark)
}

const maxTick = 1<<62 - 1

// New returns an empty wheel whose tick 0 starts at the clock value now.
// Errors read "timerwheel: config: ..." (see TimerWheelConfig.Validate).
func New(cfg TimerWheelConfig, now int64) (*Wheel, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b := uint(bits.TrailingZeros(uint(cfg.SlotsPerLevel)))
	w := &Wheel{
		heads:    make([]int32, cfg.Levels*cfg.SlotsPerLevel),
		occ:      make([]uint64, cfg.Levels),
		levels:   uint(cfg.Levels),
		slotBits: b,
		slots:    uint64(cfg.SlotsPerLevel),
		slotMask: uint64(cfg.SlotsPerLevel - 1),
		fullMask: ^uint64(0) >> (64 - uint(cfg.SlotsPerLevel)),
		tickNs:   uint64(cfg.Tick),
		origin:   now,
		now:      now,
		span:     1 << (b * uint(cfg.Levels)),
		topSize:  1 << (b * uint(cfg.Levels-1)),
		nextOK:   true,
		empty:    true,
	}
	w.slab.free = nilIdx
	for i := range w.heads {
		w.heads[i] = nilIdx
	}
	for i := range w.levelOf {
		l := uint(i) / b
		if l >= w.levels {
			l = w.levels - 1
		}
		w.levelOf[i] = uint8(l)
	}
	return w, nil
}

// tickOf maps a clock value to a tick, clamped to [0, maxTick].
func (w *Wheel) tickOf(t int64) uint64 {
	if t <= w.origin {
		return 0
	}
	tk := (uint64(t) - uint64(w.origin)) / w.tickNs
	if tk > maxTick {
		tk = maxTick
	}
	return tk
}

// Insert files a timer that fires at the exact clock value deadline and
// returns its handle. A deadline at or before the latest Advance time fires
// on the next Advance. O(1); no allocation once the slab has grown to the
// shard's peak number of pending timers.
func (w *Wheel) Insert(deadline int64, payload uint64) Handle {
	idx, e := w.slab.alloc()
	e.deadline = deadline
	e.payload = payload
	w.seq++
	e.seq = w.seq
	w.file(idx, e)
	w.live++
	w.stats.Inserts++
	if w.nextOK && (w.empty || deadline < w.next) {
		w.next, w.empty = deadline, false
	}
	return makeHandle(idx, e.gen.Load())
}

// file links e into the slot its deadline maps to, relative to the current
// tick E. The placement tick p is the deadline's tick, raised to E (past
// deadlines go to E's level-0 slot, which Advance always inspects) and
// lowered to the last tick before E's top-level slot comes round again
// (beyond-range deadlines are parked in the top level and re-filed when that
// slot is reached). The level is the highest slot-digit in which p and E
// differ.
func (w *Wheel) file(idx uint32, e *entry) {
	E := w.elapsed
	p := w.tickOf(e.deadline)
	if p < E {
		p = E
	}
	if lim := E&^(w.topSize-1) + w.span - 1; p > lim {
		p = lim
		e.parked = true
		w.parked++
	}
	var level uint
	if x := E ^ p; x != 0 {
		level = uint(w.levelOf[bits.Len64(x)-1])
	}
	slot := (p >> (level * w.slotBits)) & w.slotMask
	id := level*uint(w.slots) + uint(slot)
	e.where = uint16(id)
	e.prev = nilIdx
	h := w.heads[id]
	e.next = h
	if h != nilIdx {
		w.slab.at(uint32(h)).prev = int32(idx)
	}
	w.heads[id] = int32(idx)
	w.occ[level] |= 1 << slot
}

// unlink removes a linked entry from its slot list.
func (w *Wheel) unlink(idx uint32, e *entry) {
	id := uint(e.where)
	if e.prev != nilIdx {
		w.slab.at(uint32(e.prev)).next = e.next
	} else {
		w.heads[id] = e.next
		if e.next == nilIdx {
			level := id >> w.slotBits
			w.occ[level] &^= 1 << (id & uint(w.slotMask))
		}
	}
	if e.next != nilIdx {
		w.slab.at(uint32(e.next)).prev = e.prev
	}
	e.where = whereNone
	w.unpark(e)
}

// unpark clears e.parked when e leaves its slot.
func (w *Wheel) unpark(e *entry) {
	if e.parked {
		e.parked = false
		w.parked--
	}
}

// lookup resolves a handle that could name a pending entry of this wheel.
func (w *Wheel) lookup(h Handle) (uint32, *entry, bool) {
	idx, g := h.index(), h.gen()
	if g&1 == 0 || idx >= w.slab.n {
		return 0, nil, false
	}
	return idx, w.slab.at(idx), true
}

// Cancel stops the timer h. It reports whether h was pending: false for a
// timer that already fired, was cancelled (here or remotely) or for a stale
// or foreign handle — all no-ops. O(1). Owner only; use CancelRemote from
// other goroutines.
func (w *Wheel) Cancel(h Handle) bool {
	idx, e, ok := w.lookup(h)
	if !ok || !e.gen.CompareAndSwap(h.gen(), h.gen()+1) {
		return false
	}
	if e.where < whereNone {
		w.unlink(idx, e)
	}
	w.dropped(e.deadline)
	w.slab.release(idx, e)
	w.live--
	w.stats.Cancels++
	return true
}

// dropped keeps the NextDeadline cache honest after a pending entry with
// this deadline left the wheel.
func (w *Wheel) dropped(deadline int64) {
	if w.nextOK && !w.empty && deadline == w.next {
		w.nextOK = false
	}
}

// Reset moves the pending timer h to a new deadline, keeping its handle and
// payload; it then orders after every entry inserted before the Reset. It
// reports false (and does nothing) if h is not pending. O(1). Owner only.
func (w *Wheel) Reset(h Handle, deadline int64) bool {
	idx, e, ok := w.lookup(h)
	if !ok || e.gen.Load() != h.gen() {
		return false
	}
	// A concurrent CancelRemote may kill the entry from here on; it is then
	// unlinked and freed by the next drain, so re-filing it is harmless.
	if e.where < whereNone {
		w.unlink(idx, e)
	}
	w.dropped(e.deadline)
	e.deadline = deadline
	w.seq++
	e.seq = w.seq
	w.file(idx, e)
	if w.nextOK && (w.empty || deadline < w.next) {
		w.next, w.empty = deadline, false
	}
	w.stats.Resets++
	return true
}

// Len returns the number of pending timers. Owner only.
func (w *Wheel) Len() int {
	w.drain()
	return w.live
}

// Now returns the latest time passed to Advance (or New).
func (w *Wheel) Now() int64 { return w.now }

// Stats returns the shard's counters. Owner only.
func (w *Wheel) Stats() Stats {
	w.drain()
	s := w.stats
	s.Pending = w.live
	s.SlabEntries = int(w.slab.n)
	return s
}

// Deadline returns the deadline of the pending timer h, or false when h
// is not pending (fired, cancelled, stale or foreign). Owner only (or
// while the owner is stopped: a task dump reads it so).
func (w *Wheel) Deadline(h Handle) (int64, bool) {
	_, e, ok := w.lookup(h)
	if !ok || e.gen.Load() != h.gen() {
		return 0, false
	}
	return e.deadline, true
}
