package timerwheel

import (
	"math"
	"math/bits"
	"slices"
)

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
