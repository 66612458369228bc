package sched

import (
	"runtime"

	"github.com/jadevm/jade/internal/jtrace"
)

// The idle/search protocol: putting a woken task on a queue, waking a
// parked worker for it (notify, kickOne), a worker parking (sleep) and
// leaving the idle list. doc.go describes the protocol.

// enqueue makes a Runnable task visible to workers: in the lifo slot of
// worker w when the task running there made it runnable, on w's local
// queue when w made it runnable between tasks (timers, completions) —
// except a completion reaped while the inject queue holds tasks, which
// goes behind them — else on the inject queue (waking a parked worker).
func (s *Scheduler) enqueue(w *worker, t *Task) {
	if w != nil && w.inTask {
		// Spawned or woken by the running task: it runs next here (the
		// lifo slot); the task it displaces goes behind the others and
		// may be stolen, so a spawn of it held for the slice's end is
		// written now, before another worker can run it (unfold).
		if t, w.lifo = w.lifo, t; t == nil {
			return
		}
		if w.tr != nil {
			w.tr.unfold(t.id)
		}
	}
	if w != nil {
		if w.reaping && s.inject.len() > 0 {
			// Runnable tasks wait in the inject queue (an overflow of a
			// local queue, outside wakes): a completion goes behind them,
			// not ahead on the local queue, or under a load that keeps
			// completions coming they would wait for every later one
			// (echo_proc_1000's tail).
			s.inject.push(t)
			return
		}
		// A spawn from bytecode (spawnInVM) publishes the tail with a
		// release store: the wake check below, made with plain loads, is
		// made again after a full barrier before the worker leaves the
		// VM loop for a host call or ends its slice (flushPushes), so a
		// worker that parks meanwhile beside this task is woken then,
		// and the task waits at most the rest of this slice, on this
		// worker's own queue.
		if !w.inVM || !w.local.pushRel(t) {
			w.local.push(t, &s.inject)
		} else if len(s.workers) > 1 {
			w.lazyPush = true
		}
		if len(s.workers) > 1 && !w.reaping {
			s.notify() // a reap notifies once, after it (shareBacklog)
		}
		return
	}
	s.inject.push(t)
	if !s.notify() {
		s.kickOne()
	}
}

// notify unparks one parked worker, if any and if no worker searches (a
// searcher will find the work, or the last one re-checks every queue before
// it parks). The woken worker starts searching: the notifier counts it in
// nSearching, so a burst of pushes wakes one worker, not all of them.
//
// It reports whether some worker will look for the work: one searches or
// was woken. False means every worker is running (or about to run) a task.
func (s *Scheduler) notify() bool {
	if s.nSearching.Load() != 0 {
		return true
	}
	if s.nIdle.Load() == 0 {
		return false
	}
	s.idleMu.Lock()
	n := len(s.idle)
	if n == 0 || s.nSearching.Load() != 0 {
		s.idleMu.Unlock()
		return n != 0
	}
	// The most recently idled worker, unless it is handing itself to Go's
	// scheduler on its way into the park (yieldGo): that one would take
	// the wake only once Go runs it again, while this counts it as
	// searching and so stops anyone else being woken.
	i := n - 1
	for j := n - 1; j >= 0; j-- {
		if !s.idle[j].inGo.Load() {
			i = j
			break
		}
	}
	w := s.idle[i]
	s.idle = append(s.idle[:i], s.idle[i+1:]...)
	s.nIdle.Add(-1)
	w.parked = false
	w.notified = true
	s.nSearching.Add(1)
	s.idleMu.Unlock()
	w.unpark()
	return true
}

// kickOne makes an outside wake that found every worker busy wait for a
// safe point rather than a slice boundary (S-6, spec §1.2): it stops the
// slice running on one worker (rotating), whose next pick then looks at
// the inject queue first. Without it the woken task waited for the first
// of the workers' slices to end — up to a whole slice plus the thread's
// scheduling (TestOutsideWakeKicksBusyWorker). The stopped task loses the
// rest of its slice and goes behind the others, as if preempted; at most
// one kick is outstanding until a worker takes from the inject queue.
func (s *Scheduler) kickOne() {
	for {
		if s.kick.Load() || !s.kick.CompareAndSwap(false, true) {
			return
		}
		if s.inject.len() > 0 {
			break
		}
		// A worker took the task between the push and the kick (and found
		// no kick to answer): a kick now would stay outstanding with
		// nothing queued and deny the next outside wake its own. Withdraw
		// it; if something was queued meanwhile, its waker may have seen
		// the kick set and returned, so kick for it.
		s.kick.Store(false)
		if s.inject.len() == 0 {
			return
		}
	}
	n := uint32(len(s.workers))
	start := s.kickNext.Add(1)
	for i := uint32(0); i < n; i++ {
		w := s.workers[(start+i)%n]
		if w.inGo.Load() {
			continue // handed to Go's scheduler for a moment (yieldGo)
		}
		if ex := w.curEx(); ex != nil {
			ex.Stop()
			s.kicks.Add(1)
			return
		}
	}
	// No worker has run a task yet: their next pick sees s.kick.
}

// localWork reports whether some worker's local queue holds a task.
func (s *Scheduler) localWork() bool {
	for _, w := range s.workers {
		if w.local.len() > 0 {
			return true
		}
	}
	return false
}

// IdleWorkers returns how many workers are parked (a snapshot).
func (s *Scheduler) IdleWorkers() int { return int(s.nIdle.Load()) }

// sleep parks the worker. Protocol (no unpark is lost): register as idle,
// leave the searching state, look once more, then block. A producer pushes
// before it loads s.nSearching and s.nIdle, so either we see its task here
// or it sees us (idle, or still searching — then the last searcher, which
// re-checks every queue here, sees the task).
func (w *worker) sleep() {
	s := w.s
	if w.timers.next != noDeadline {
		// Exact deadline (remote cancels drained); a due timer is work.
		if w.fire(); w.local.len() > 0 {
			return
		}
	}
	s.idleMu.Lock()
	w.parked = true
	s.idle = append(s.idle, w)
	s.nIdle.Add(1)
	s.idleMu.Unlock()
	last := false
	if w.searching {
		w.searching = false
		w.searchEnd()
		last = s.nSearching.Add(-1) == 0
	}
	if s.inject.len() > 0 || w.stop.Load() || (last && s.localWork()) {
		w.unidle()
		return
	}
	w.parks.add(1)
	if w.yieldGo() {
		w.parkYields.add(1)
	}
	// The watcher also parks until a peer's timer is overdue (stall.go).
	timeout := minTimeout(w.parkTimeout(), w.watch())
	if w.local.len() > 0 { // the watcher fired a stalled peer's timers
		w.unwatch()
		w.unidle()
		return
	}
	if x := w.io.Load(); x != nil {
		w.parkAway()
		n := w.pollIO(x, timeout)
		w.parkBack()
		w.unwatch()
		w.unidle()
		if n > 0 {
			w.shareBacklog() // off s.idle now: it cannot pick itself
		}
		return
	}
	w.parkAway()
	w.park.park(timeout)
	w.parkBack()
	w.unwatch()
	w.unidle()
}

// parkAway begins a park: w's registry list is marked away (others unlink
// its ended tasks themselves meanwhile), then the park is timed.
func (w *worker) parkAway() {
	w.regAway()
	w.parkBegin()
}

// parkBack ends a park that parkAway began.
func (w *worker) parkBack() {
	w.parkEnd()
	w.regBack()
}

// shareBacklog wakes a parked worker after a reap (pollIO) left more than
// one task on w's local queue: w runs the next one itself, and another
// worker may steal the rest. A single completion wakes nobody.
func (w *worker) shareBacklog() {
	if len(w.s.workers) > 1 && w.local.len() > 1 {
		w.s.notify()
	}
}

// yieldGo hands the worker's goroutine to Go's scheduler (runtime.Gosched)
// when it has not done so for goYieldEvery, and reports whether it did. It
// runs on the way into a park (the worker has nothing to do then) and, for
// a worker that never parks, every 64 picks (find).
//
// Why: a locked worker never goes through Go's scheduler, so its P's
// schedtick stands still. Go's sysmon takes that for a goroutine running
// for more than 10 ms and, every 10 ms, either preempts it (a signal and a
// hand-over of the locked thread) or, when it catches the worker blocked
// in its park's system call, takes the P away and starts another thread
// for it; each time it also drops back to its fastest polling. A yield
// costs one such hand-over, but at most every goYieldEvery and at a
// moment of our choosing (TestWorkerYieldsToGo; resp_ping's server CPU
// per request measures it, docs/PERFORMANCE.md).
func (w *worker) yieldGo() bool {
	if now := nanotime(); now-w.lastYield > goYieldEvery {
		w.lastYield = now
		w.inGo.Store(true)
		runtime.Gosched()
		w.inGo.Store(false)
		end := nanotime()
		addTo(&w.times.goYield, end-now)
		if since := w.times.searchSince.Load(); since != 0 {
			// A yield within a search (find's every 64 picks, in spin's
			// looks) is Go's time, not the search's: counted once.
			w.times.searchSince.Store(since + end - now)
		}
		if w.tr != nil {
			w.traceAt(jtrace.KindGoYield, end, uint64(end-now))
		}
		w.goYields.add(1)
		return true
	}
	return false
}

// unidle removes w from the idle list if a notifier has not done so, and
// takes over the searching count a notifier made on its behalf.
func (w *worker) unidle() {
	s := w.s
	s.idleMu.Lock()
	if w.parked {
		for i, x := range s.idle {
			if x == w {
				s.idle = append(s.idle[:i], s.idle[i+1:]...)
				break
			}
		}
		w.parked = false
		s.nIdle.Add(-1)
	}
	if w.notified {
		w.notified = false
		w.searching = true
		w.searchBegin()
	}
	s.idleMu.Unlock()
}
