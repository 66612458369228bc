package sched

import (
	"math/rand/v2"

	"github.com/jadevm/jade/internal/jtrace"
)

// A worker looking for work without blocking: its lifo slot and local
// ring, the inject queue, and stealing from the others.

// find looks local → inject → steal without blocking.
func (w *worker) find() (t *Task) {
	s := w.s
	if w.due() {
		// Slice boundary: due timers wake their tasks onto the local queue
		// even while every worker is busy.
		w.fire()
	}
	w.checkStalled() // and those of a stalled peer (stall.go)
	w.ticks++
	slot := w.lifo
	x := w.io.Load()
	deferred := false // a dry poll left queued SQEs to the parking Wait
	sliceDue := w.spent >= injectEvery
	if x != nil && x.n > 0 && (w.ticks%ioPollEvery == 0 || sliceDue || w.local.len() == 0 && slot == nil) {
		// And so do ready completions — when the local queue runs dry,
		// every ioPollEvery dispatches, and once a slice's worth of
		// reductions has run since the inject queue was last looked at
		// (the same time basis, without a clock read: behind tasks that
		// each run whole slices, a completion waits about one slice, not
		// ioPollEvery of them; http_mixed measures it): the SQEs of the
		// tasks run in between go to the kernel in one enter, not one
		// each. When the
		// queue ran dry and nothing is ready to reap, the poll would only
		// submit: the worker's park (its backend's Wait) submits and
		// blocks in one enter instead — a read armed by a task and the
		// wait for it cost one syscall, not two (echo_proc_1 measures
		// it) — unless the worker finds a task first (flushed below).
		if w.ticks%ioPollEvery != 0 && !sliceDue && x.ready != nil && !x.ready() {
			deferred = true
		} else if w.pollBusy(x) > 0 {
			w.shareBacklog()
		}
	}
	if deferred {
		defer func() {
			if t != nil && w.pollBusy(x) > 0 { // not parking: submit before running t
				w.shareBacklog()
			}
		}()
	}
	if w.injectFirst || sliceDue || w.ticks%32 == 0 || s.kick.Load() {
		// The inject queue holds outside wakes and the older half of
		// overflowed rings: take its share now (FIFO) so that it is
		// drained as fast as it fills. Besides after every preempted or
		// yielding slice and every 32 picks, it is looked at once the
		// worker has spent a slice's worth of reductions since the last
		// look (a time basis without a clock read): an outside wake waits
		// about one slice even behind many short dispatches.
		w.injectFirst = false
		w.spent = 0
		if w.ticks%64 == 0 {
			// A busy worker too (one clock read per 64 picks), before the
			// look: what came meanwhile is seen now.
			w.yieldGo()
		}
		if t := w.takeInject(); t != nil {
			return t
		}
	}
	if slot != nil {
		w.lifo = nil
		// A pick from the slot costs lifoCost, so that a chain shares one
		// slice even when its tasks run few or no reductions.
		if c := lifoCost(slot.engine.cfg.Load().ReductionLimit); w.sliceLeft > c {
			w.inherit = w.sliceLeft - c
			w.spent += c
			return slot
		}
		// Its chain used up the slice: behind the others (S-6).
		w.local.push(slot, &s.inject)
		w.injectFirst = true
	}
	if t := w.local.pop(); t != nil {
		return t
	}
	if t := w.takeInject(); t != nil {
		return t
	}
	if len(s.workers) > 1 && w.beginSearch() {
		if t := w.steal(); t != nil {
			w.steals.add(1)
			if w.tr != nil {
				w.traceTaskAt(jtrace.KindSteal, t, uint64(w.local.len()+1), nanotime())
			}
			return t
		}
		// The global queue once more: a producer that saw us searching did
		// not wake anyone.
		if t := s.inject.pop(); t != nil {
			s.answerKick()
			if w.tr != nil {
				w.traceTaskAt(jtrace.KindInject, t, 1, nanotime()) // as takeInject's
			}
			return t
		}
	}
	return nil
}

// takeInject takes a share of the inject queue — its length split over the
// workers, at most what fits in half of the local ring — in one lock: the
// first to run now, the rest onto the local queue.
func (w *worker) takeInject() *Task {
	s := w.s
	n := s.inject.len()
	if n == 0 {
		return nil
	}
	share := min(int(n)/len(s.workers)+1, localCap/2-w.local.len())
	share = max(share, 1)
	t := s.inject.popBatch(&w.local, share)
	if t != nil {
		// After the take, not before: a kick set between a look and the
		// take would otherwise stay outstanding with the task gone (kickOne
		// withdraws one that finds the queue empty).
		s.answerKick()
		if w.tr != nil {
			// With the clock read, as a steal: the host (or another
			// worker) queued t after this worker's last exact event,
			// maybe while it searched, and a dispatch placed by that
			// event would come before the spawn or wake that queued t
			// (TestTraceChainSpawns).
			w.traceTaskAt(jtrace.KindInject, t, uint64(share), nanotime())
		}
		if share > 1 && len(s.workers) > 1 {
			s.notify() // others may steal part of the batch
		}
	}
	return t
}

// answerKick clears an outstanding kick (kickOne) once a worker has taken
// from the inject queue, so that the next outside wake may kick again.
func (s *Scheduler) answerKick() {
	if s.kick.Load() {
		s.kick.Store(false)
	}
}

// beginSearch enters the searching state unless half of the workers
// already search (Tokio's idle.rs rule: 2·searching < workers).
func (w *worker) beginSearch() bool {
	if w.searching {
		return true
	}
	s := w.s
	for {
		n := s.nSearching.Load()
		if 2*int(n) >= len(s.workers) {
			return false
		}
		if s.nSearching.CompareAndSwap(n, n+1) {
			w.searching = true
			w.searchBegin()
			return true
		}
	}
}

// endSearch leaves the searching state after finding work; the last
// searcher wakes another parked worker, which then searches in its place
// (there may be more work than this worker can take).
func (w *worker) endSearch() {
	w.searching = false
	w.searchEnd()
	if w.s.nSearching.Add(-1) == 0 {
		w.s.notify()
	}
}

// steal takes half of a random victim's local queue, trying every other
// worker once starting at the random one.
func (w *worker) steal() *Task {
	ws := w.s.workers
	n := len(ws)
	start := rand.IntN(n)
	for i := 0; i < n; i++ {
		v := ws[(start+i)%n]
		if v == w {
			continue
		}
		if t := v.local.stealInto(&w.local); t != nil {
			return t
		}
	}
	return nil
}
