package sched

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Timers of a stalled worker (spec S-4, S-6).
//
// A worker fires its own timers at its slice boundaries and when its park
// ends. A worker that stalls — its thread blocked in a host intrinsic that
// was registered as non-blocking, a long cgo call, a page fault storm, its
// vCPU taken by the hypervisor — fires nothing until it comes back, so the
// tasks sleeping in its shards wake as late as the stall is long. Another
// worker fires them instead: the thief.
//
// The hold word. workerTimers.hold says who may touch a worker's shards
// and timer records: holdFree, holdOwner or holdThief. The owner takes it
// (a compare-and-swap on a word only it writes in the common case, so the
// line stays in its cache) around each touch — addTimer, the local cancel
// of dropTaskTimer, fire — and gives it back (a store) at once: it never
// holds it across a slice's bytecode or a park, which is where stalls
// happen. A thief takes it only from holdFree and only when the owner's
// earliest deadline, published in workerTimers.pub, is overdue by
// stealAfter; it fires the due timers, publishes the new earliest deadline
// and gives the word back. A thief that finds the word held moves on. An
// owner that finds it held waits for the thief's one Advance (it yields
// its thread meanwhile): the only wait of the owner, and only after it was
// itself late by stealAfter. The Wheel itself stays lock-free
// (timerwheel's "one shard, one owner" is now "one holder at a time"); the
// owner's fast path gains one uncontended CAS and one store per operation
// (BenchmarkTimerHold).
//
// What a thief fires runs on the thief: it wins the wake CAS of the
// timer's token like any waker, and the task goes on the thief's queue.
// An I/O timeout is different: its operation lives on the owner's backend
// (one ring per worker, and only its thread submits to it), and the
// operation's completion decides whether the wait timed out or did its
// work (a read that took bytes must return them). The thief therefore
// hands the timeout back: it appends it to workerTimers.back, sets
// workerTimers.remote and wakes the owner's park; the owner cancels the
// operation on its backend at its next slice boundary or as its park ends
// (fire). A parked owner does so at once; a stalled owner when it comes
// back, which is the earliest its backend can report the operation's end.
//
// Finding a stalled peer without a heartbeat. Scheduler.stall.hint is a
// lower bound of every worker's published earliest deadline: an owner that
// publishes an earlier one lowers it (CAS), a worker that finds it overdue
// by stealAfter scans the workers' pub words, rescues the stalled ones and
// raises it to the new minimum. A busy worker compares it with the clock
// at every pick (find; one load when no timer exists anywhere). A parking
// worker becomes the watcher unless another parked worker already is
// (stall.watcher): it parks until the hint plus stealAfter at the latest
// and publishes that instant in stall.until; an owner that publishes a
// deadline earlier than the watcher's wake-up (less stealAfter) unparks
// it. When no worker watches — the watcher took work while a timer is
// pending, or an owner publishes a deadline with no watcher — a parked
// worker is unparked to take the role (wakeWatcher). So a parked worker
// wakes for a peer's timer only when that timer is
// overdue, never on a period (S-4), and at most one parked worker watches.
// The price: a peer that fires its earliest timer on time leaves the hint
// behind, and the watcher wakes once, stealAfter later, to find that out
// and raise it — one wake-up of one parked worker per earliest timer of
// the busy ones, as Go's netpoller pays for the earliest timer of every P.
// Without timers there is no watcher wake-up at all.

// stealAfter is how long a worker's earliest timer may be overdue before
// another worker fires it: about two default slices, the longest a worker
// that is not stalled takes to reach its next slice boundary.
const stealAfter = 200_000 // ns

// watchFloor is the shortest park of a watcher whose peer is overdue but
// whose hold word was taken (the owner is inside a timer operation): it
// tries again after this long instead of spinning.
const watchFloor = 20_000 // ns

// States of workerTimers.hold.
const (
	holdFree  = 0
	holdOwner = 1
	holdThief = 2
)

// stallState is the scheduler's part of the protocol above.
type stallState struct {
	// hint is a lower bound of every worker's workerTimers.pub (noDeadline
	// when no timer is pending anywhere).
	hint atomic.Int64
	_    [cacheLinePad - 8]byte
	// watcher is the parked worker that watches the others' deadlines,
	// nil when none; until is the instant its park ends at the latest.
	watcher atomic.Pointer[worker]
	until   atomic.Int64
	// stolen counts the timers fired by a worker other than their owner;
	// routed counts the I/O timeouts among them, handed back to the
	// owner's backend.
	stolen atomic.Uint64
	routed atomic.Uint64
}

// timerBack is the list of I/O timeouts a thief handed back to a worker
// (the workerTimers.back field).
type timerBack struct {
	mu   sync.Mutex
	recs []timerRec // guarded by mu
	n    atomic.Int32
}

// initStall sets the "no deadline" state before the workers start.
func (s *Scheduler) initStall() {
	s.stall.hint.Store(noDeadline)
	s.stall.until.Store(noDeadline)
	for _, w := range s.workers {
		w.timers.pub.Store(noDeadline)
	}
}

// StolenTimers returns how many timers a worker fired for a stalled peer,
// and how many of those were I/O timeouts handed back to the peer's
// backend.
func (s *Scheduler) StolenTimers() (fired, routed uint64) {
	return s.stall.stolen.Load(), s.stall.routed.Load()
}

// lock takes w's shards for their owner: around every touch of the shards
// and of recs by the owner.
func (wt *workerTimers) lock() {
	for !wt.hold.CompareAndSwap(holdFree, holdOwner) {
		runtime.Gosched() // a thief fires our timers: one Advance
	}
}

// unlock gives the shards back.
func (wt *workerTimers) unlock() { wt.hold.Store(holdFree) }

// publishNext makes d the published earliest deadline of w's shards (w
// holds them): it lowers the scheduler's hint to d if d is earlier, then
// unparks the watcher if it would wake too late for d, or a parked worker
// to watch when none does; by is the worker calling (the owner, or a
// thief firing w's timers), which is awake. Store-then-load: pub and
// hint are stored before the watcher's until is loaded; the watcher
// stores until before it loads the hint (watch).
func (w *worker) publishNext(wt *workerTimers, d int64, by *worker) {
	if wt.pub.Load() == d {
		return
	}
	wt.pub.Store(d)
	s := w.s
	if len(s.workers) < 2 {
		return
	}
	s.lowerHint(d)
	if d == noDeadline {
		return
	}
	// Someone must look at d + stealAfter: the watcher, woken if it would
	// look later, or a parked worker woken to watch (the hint may have been
	// lower than d already, and stale).
	if x := s.stall.watcher.Load(); x == nil {
		s.wakeWatcher(by)
	} else if x != by && d < s.stall.until.Load()-stealAfter {
		x.unpark()
	}
}

// wakeWatcher unparks a parked worker other than w, if any, to take the
// vacant watcher role: it finds nothing to do and parks again, watching.
// Store-then-load: a parking worker counts itself in nIdle and takes the
// role (watch) before it loads the hint; an owner stores the hint, and a
// leaving watcher clears the role, before they load the role and nIdle.
func (s *Scheduler) wakeWatcher(w *worker) {
	if s.nIdle.Load() == 0 || s.stall.watcher.Load() != nil {
		return
	}
	var x *worker
	s.idleMu.Lock()
	for i := len(s.idle) - 1; i >= 0; i-- {
		if s.idle[i] != w {
			x = s.idle[i]
			break
		}
	}
	s.idleMu.Unlock()
	if x != nil {
		x.unpark()
	}
}

// lowerHint lowers the hint to d and reports whether it did.
func (s *Scheduler) lowerHint(d int64) bool {
	for {
		h := s.stall.hint.Load()
		if d >= h {
			return false
		}
		if s.stall.hint.CompareAndSwap(h, d) {
			return true
		}
	}
}

// checkStalled rescues stalled peers when the hint says one may be
// overdue (a pick; cheap when no timer is pending anywhere).
func (w *worker) checkStalled() {
	s := w.s
	if h := s.stall.hint.Load(); h != noDeadline && len(s.workers) > 1 {
		if now := nanotime(); now-stealAfter >= h {
			w.rescue(now)
		}
	}
}

// rescue fires the due timers of every peer whose published earliest
// deadline is overdue by stealAfter at now, then raises the hint to the
// new minimum. The tasks woken go on w's queue.
func (w *worker) rescue(now int64) {
	s := w.s
	h := s.stall.hint.Load()
	m := int64(noDeadline)
	for _, p := range s.workers {
		pt := &p.timers
		d := pt.pub.Load()
		if p != w && d != noDeadline && now-stealAfter >= d && pt.hold.CompareAndSwap(holdFree, holdThief) {
			d = w.fireFor(p, now)
			pt.unlock()
		}
		m = min(m, d)
	}
	if m <= h || !s.stall.hint.CompareAndSwap(h, m) {
		return
	}
	// Store-then-load: an owner that published below m after its pub was
	// read above either saw the raised hint (and lowered it) or is seen
	// now.
	for _, p := range s.workers {
		s.lowerHint(p.timers.pub.Load())
	}
}

// fireFor is the thief w's fire of p's shards (w holds them): the due
// timers wake their tasks onto w's queue, except I/O timeouts, which go
// back to p (routeIO). It publishes and returns p's new earliest deadline.
func (w *worker) fireFor(p *worker, now int64) int64 {
	pt, wt := &p.timers, &w.timers
	next := int64(noDeadline)
	reaping := w.reaping
	w.reaping = true // no notify per wake: one after the batch
	n := 0
	for id, sh := range pt.shards {
		if sh == nil {
			continue
		}
		e := pt.engine[id]
		wt.exp = sh.Advance(now, wt.exp[:0]) // w's scratch: w is not in its own fire
		for _, x := range wt.exp {
			w.timerLate(e, x.Deadline, now)
			rec := pt.release(uint32(x.Payload), e)
			n++
			if rec.kind == timerIOTimeout {
				p.routeIO(rec)
				continue
			}
			w.s.fireTimer(w, rec)
		}
		wt.gone = sh.TakeCancelled(wt.gone[:0])
		for _, g := range wt.gone {
			pt.recs.take(uint32(g)) // the canceller gave back the count
		}
		if d, ok := sh.NextDeadline(); ok && d < next {
			next = d
		}
	}
	w.reaping = reaping
	w.s.stall.stolen.Add(uint64(n))
	if n > 0 && len(w.s.workers) > 1 && w.local.len() > 1 {
		w.s.notify()
	}
	p.publishNext(pt, next, w)
	return next
}

// routeIO hands an I/O timeout that a thief fired back to w, whose backend
// holds the operation: w cancels it at its next fire; a parked w is woken
// for it.
func (w *worker) routeIO(rec timerRec) {
	b := &w.timers.back
	b.mu.Lock()
	b.recs = append(b.recs, rec)
	b.n.Add(1)
	b.mu.Unlock()
	w.s.stall.routed.Add(1)
	w.timers.remote.Store(true) // due() looks at it
	w.unpark()
}

// takeBack cancels, on w's own backend, the I/O timeouts a thief handed
// back (owner only; in fire).
func (w *worker) takeBack() {
	b := &w.timers.back
	if b.n.Load() == 0 {
		return
	}
	b.mu.Lock()
	recs := b.recs
	b.recs = nil
	b.n.Store(0)
	b.mu.Unlock()
	for _, r := range recs {
		w.timeoutIO(r.io, r.t, r.gen)
	}
}

// watch is called by w on its way into a park: if no other parked worker
// watches, w becomes the watcher, rescues overdue peers and returns how
// long it may park for the others' deadlines (-1: no limit); unwatch ends
// the role after the park.
func (w *worker) watch() int64 {
	s := w.s
	if len(s.workers) < 2 || !s.stall.watcher.CompareAndSwap(nil, w) {
		return -1
	}
	now := nanotime()
	w.rescue(now)
	for {
		h := s.stall.hint.Load()
		until := int64(noDeadline)
		if h < noDeadline-stealAfter {
			until = h + stealAfter
		}
		s.stall.until.Store(until)
		// Store-then-load: an owner publishing an earlier deadline from
		// now on sees until and unparks w; one that published before is
		// seen here.
		if s.stall.hint.Load() != h {
			continue
		}
		if until == noDeadline {
			return -1
		}
		return max(until-now, watchFloor)
	}
}

// unwatch gives up the watcher role after a park.
func (w *worker) unwatch() {
	s := w.s
	if s.stall.watcher.Load() == w {
		s.stall.until.Store(noDeadline)
		s.stall.watcher.Store(nil)
		if s.stall.hint.Load() != noDeadline {
			s.wakeWatcher(w) // a timer is pending: another parked worker watches
		}
	}
}

// minTimeout is the shorter of two park timeouts (-1: no limit).
func minTimeout(a, b int64) int64 {
	if a < 0 {
		return b
	}
	if b < 0 {
		return a
	}
	return min(a, b)
}
