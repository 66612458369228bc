package timerwheel

import (
	"math"
	"math/bits"
	"slices"
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

// earliest finds the earliest occupied slot: the lowest non-empty level
// holds it (an entry at level l shares E's digits above l, so it precedes
// every entry at level l+1), and within that level the first set bit of the
// bitmap rotated to E's digit. It returns the slot id and the tick at which
// the slot starts. O(Levels).
func (w *Wheel) earliest() (id uint, start uint64, ok bool) {
	E := w.elapsed
	for l := uint(0); l < w.levels; l++ {
		occ := w.occ[l]
		if occ == 0 {
			continue
		}
		shift := l * w.slotBits
		digit := (E >> shift) & w.slotMask
		rot := (occ>>digit | occ<<(w.slots-digit)) & w.fullMask
		slot := (digit + uint64(bits.TrailingZeros64(rot))) & w.slotMask
		block := shift + w.slotBits // ticks per block of this level = 1<<block
		start = E&^(1<<block-1) + slot<<shift
		if slot < digit {
			start += 1 << block // only the top level wraps into the next block
		}
		return l*uint(w.slots) + uint(slot), start, true
	}
	return 0, 0, false
}

// NextDeadline returns the exact earliest deadline among pending timers
// (the entry's own deadline, not a slot boundary), or false if there is
// none. Park until that clock value, then Advance.
//
// Cost: the result is cached; the cache survives inserts, resets and every
// removal except that of the minimum itself. On a miss: O(Levels) bitmap
// work to find the earliest occupied slot (earliest), plus one walk of that
// slot's list (Stats.SlotScans, Stats.ScanSteps). A level-l slot holds the
// entries of SlotsPerLevel^l ticks, so the walk is short near the present
// and can be long for a crowded far slot. Owner only.
func (w *Wheel) NextDeadline() (int64, bool) {
	w.drain()
	if !w.nextOK {
		w.recompute()
	}
	return w.next, !w.empty
}

func (w *Wheel) recompute() {
	w.nextOK = true
	id, _, ok := w.earliest()
	if !ok {
		w.empty = true
		return
	}
	top := w.levels - 1
	if uint(id)>>w.slotBits < top || w.parked == 0 {
		w.next, w.empty = w.scanMin(id, math.MaxInt64), false
		return
	}
	// The earliest slot is in the top level and some entries are parked
	// beyond the range: parked entries of different slots are not ordered
	// by slot, so the minimum needs every top-level slot.
	best := int64(math.MaxInt64)
	for occ := w.occ[top]; occ != 0; occ &= occ - 1 {
		best = w.scanMin(top*uint(w.slots)+uint(bits.TrailingZeros64(occ)), best)
	}
	w.next, w.empty = best, false
}

// scanMin returns the smaller of best and the earliest deadline in slot id.
// Entries killed remotely but not yet drained may count: drain ran just
// before, and a kill racing it only makes the result early.
func (w *Wheel) scanMin(id uint, best int64) int64 {
	w.stats.SlotScans++
	for i := w.heads[id]; i != nilIdx; {
		e := w.slab.at(uint32(i))
		w.stats.ScanSteps++
		best = min(best, e.deadline)
		i = e.next
	}
	return best
}

// Advance moves the wheel to the clock value now and appends every timer
// whose deadline is ≤ now to dst, in deadline order (ties in insertion
// order, a Reset counting as a new insertion), returning the extended slice.
// Fired handles become stale. A now earlier than a previous Advance is a
// no-op. Timers inserted while processing the result fire on a later call.
//
// Cost: when nothing is due, a comparison with the cached NextDeadline
// (recomputed first if a removal invalidated it); otherwise O(Levels) per
// occupied slot passed, plus one move per entry per level it cascades
// through, plus sorting the due ones. Empty slots are never visited, so the
// cost does not grow with the length of the jump (a jump past the whole
// range is one O(pending) sweep). No allocation once dst and the internal
// scratch buffer have grown. Owner only.
func (w *Wheel) Advance(now int64, dst []Expired) []Expired {
	if now < w.now {
		return dst
	}
	w.now = now
	w.drain()
	if !w.nextOK {
		w.recompute()
	}
	if w.empty || w.next > now {
		return dst
	}
	K := w.tickOf(now)
	w.scratch = w.scratch[:0]
	if K-w.elapsed >= w.span {
		// A jump past the whole range: every in-range entry is due, so
		// walking slot by slot would only re-park beyond-range entries
		// once per range. Sweep everything once instead.
		w.sweep(K, now)
		return w.deliver(dst)
	}
	for {
		id, start, ok := w.earliest()
		if !ok || start > K {
			break
		}
		w.elapsed = start
		if id < uint(w.slots) { // level 0
			w.collect(id, start < K, now)
			if start == K {
				break
			}
			continue
		}
		w.cascade(id)
	}
	if w.elapsed < K {
		w.elapsed = K
	}
	w.nextOK = false
	return w.deliver(dst)
}

// sweep handles a jump of at least the wheel's range: it empties every
// slot, collects the due entries, moves E to K and re-files the rest (which
// were parked beyond the range). O(pending entries).
func (w *Wheel) sweep(K uint64, now int64) {
	keep := nilIdx
	for l := uint(0); l < w.levels; l++ {
		for occ := w.occ[l]; occ != 0; occ &= occ - 1 {
			id := l*uint(w.slots) + uint(bits.TrailingZeros64(occ))
			i := w.heads[id]
			w.heads[id] = nilIdx
			for i != nilIdx {
				idx := uint32(i)
				e := w.slab.at(idx)
				i = e.next
				e.where = whereNone
				w.unpark(e)
				g := e.gen.Load()
				switch {
				case g&1 == 0: // killed remotely; the drain frees it
				case e.deadline <= now:
					w.scratch = append(w.scratch, dueRec{deadline: e.deadline, seq: e.seq, idx: idx, gen: g})
				default:
					e.next = keep
					keep = int32(idx)
				}
			}
		}
		w.occ[l] = 0
	}
	w.elapsed = K
	for keep != nilIdx {
		idx := uint32(keep)
		e := w.slab.at(idx)
		keep = e.next
		w.file(idx, e)
		w.stats.Cascades++
	}
	w.nextOK = false
}

// collect unlinks the due entries of a level-0 slot into scratch: all of
// them when the slot's tick is over, else those with deadline ≤ now. In a
// one-level wheel the slot may also hold parked entries; those not due are
// re-filed further on.
func (w *Wheel) collect(id uint, all bool, now int64) {
	for i := w.heads[id]; i != nilIdx; {
		idx := uint32(i)
		e := w.slab.at(idx)
		i = e.next
		g := e.gen.Load()
		if g&1 == 0 { // killed remotely: unlink; the drain frees it
			w.unlink(idx, e)
			continue
		}
		switch {
		case e.deadline <= now || all && !e.parked:
			w.unlink(idx, e)
			w.scratch = append(w.scratch, dueRec{deadline: e.deadline, seq: e.seq, idx: idx, gen: g})
		case e.parked: // single-level wheel: level 0 is the top level
			w.unlink(idx, e)
			w.file(idx, e)
			w.stats.Cascades++
		}
	}
}

// cascade re-files every entry of a higher-level slot relative to the new
// current tick; each lands in a lower level (or, if parked beyond range, in
// another top-level slot).
func (w *Wheel) cascade(id uint) {
	i := w.heads[id]
	w.heads[id] = nilIdx
	level := id >> w.slotBits
	w.occ[level] &^= 1 << (id & uint(w.slotMask))
	for i != nilIdx {
		idx := uint32(i)
		e := w.slab.at(idx)
		i = e.next
		w.unpark(e)
		if e.gen.Load()&1 == 0 {
			e.where = whereNone
			continue
		}
		w.file(idx, e)
		w.stats.Cascades++
	}
}

// deliver sorts the collected entries and claims each with the pending→dead
// CAS; an entry whose CAS fails was cancelled remotely meanwhile and is left
// to the drain.
func (w *Wheel) deliver(dst []Expired) []Expired {
	due := w.scratch
	if len(due) > 1 {
		slices.SortFunc(due, func(a, b dueRec) int {
			if a.deadline != b.deadline {
				if a.deadline < b.deadline {
					return -1
				}
				return 1
			}
			if a.seq < b.seq {
				return -1
			}
			return 1
		})
	}
	for _, r := range due {
		e := w.slab.at(r.idx)
		if !e.gen.CompareAndSwap(r.gen, r.gen+1) {
			continue
		}
		dst = append(dst, Expired{Deadline: r.deadline, Payload: e.payload, Handle: makeHandle(r.idx, r.gen)})
		w.slab.release(r.idx, e)
		w.live--
		w.stats.Fires++
	}
	w.scratch = due[:0]
	return dst
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
