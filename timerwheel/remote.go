package timerwheel

// CancelRemote stops the timer h from any goroutine, including while the
// owner is inside Advance. It reports whether this call cancelled a pending
// timer; once it returns true the timer will never be delivered by Advance.
//
// Scheme: the canceller resolves h through the slab's published page
// directory (pages never move), bumps the entry's generation with a CAS
// (odd = pending → even = dead; the owner's fire uses the same CAS, so
// exactly one of them wins), and pushes the entry onto a lock-free stack
// threaded through the entries. The owner swaps that stack out whole at the
// start of Advance, NextDeadline, Len and Stats and unlinks and frees the
// entries; until then a dead entry may sit in its slot, at worst making one
// NextDeadline early (a spurious wake-up, never a lost or stale fire).
// Push-only plus swap-all has no ABA problem. No lock, no allocation.
func (w *Wheel) CancelRemote(h Handle) bool {
	idx, g := h.index(), h.gen()
	if g&1 == 0 {
		return false
	}
	e := w.slab.remoteAt(idx)
	if e == nil || !e.gen.CompareAndSwap(g, g+1) {
		return false
	}
	for {
		top := w.cancelTop.Load()
		e.clink.Store(top)
		if w.cancelTop.CompareAndSwap(top, idx+1) {
			return true
		}
	}
}

// drain frees the entries cancelled remotely since the last drain. Owner
// only. One atomic load when there is nothing to do.
func (w *Wheel) drain() {
	if w.cancelTop.Load() == 0 {
		return
	}
	top := w.cancelTop.Swap(0)
	for top != 0 {
		idx := top - 1
		e := w.slab.at(idx)
		top = e.clink.Load()
		if e.where < whereNone {
			w.unlink(idx, e)
		}
		w.dropped(e.deadline)
		w.cancelled = append(w.cancelled, e.payload)
		w.slab.release(idx, e)
		w.live--
		w.stats.Cancels++
		w.stats.RemoteCancels++
	}
}

// TakeCancelled appends to dst the payloads of the timers cancelled with
// CancelRemote and drained since the last call, and forgets them. An owner
// that keeps a record per payload frees those records here: a remote
// canceller cannot touch owner-only state. Owner only.
func (w *Wheel) TakeCancelled(dst []uint64) []uint64 {
	w.drain()
	dst = append(dst, w.cancelled...)
	w.cancelled = w.cancelled[:0]
	return dst
}
