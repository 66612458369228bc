package sched

import "github.com/jadevm/jade/vmloop"

// The task in the lifo slot run first. A task spawned or woken by the
// task running on a worker waits in that worker's lifo slot to run next
// on the rest of its waker's slice. When the running task is about to
// wait, the worker runs the slot's task first, nested in the running
// task's slice, instead of parking the running task and picking the
// other from the slot:
//
//   - a join of the slot's task (RunFirst, called by the bus before the
//     join looks at it) then finds it completed: no arm, no park, no
//     wake, no pick, no resumed request;
//   - any other wait (act, ActSuspend: the wait is registered and armed
//     already) is taken in place if the slot's task gives it its wake
//     meanwhile (an event signal, a message, a join): the waiter goes on
//     in its slice (begin) and never parks; else it parks as before.
//
// It is the lifo pick made early: the same task runs on the same worker
// on the same budget, charged lifoCost as the pick is (S-6: a spawn +
// join or ping-pong chain still yields after about lifoPicksPerSlice
// links), and the wait is registered before the other task runs, so it
// misses no wake (a broadcast included).

// RunFirst runs target's slice now, on from's worker and slice, when a
// join by from would otherwise wait for it while it waits in that
// worker's lifo slot: from is running (at its join request), target is
// Runnable in the slot. It reports whether target ran; the caller then
// looks at its state as a join does (it may have completed, waited, or
// been preempted). It does nothing when the target is elsewhere or when
// firstOK says no.
func (c *Control) RunFirst(from, target *Task) bool {
	w := from.worker()
	if w == nil || w.lifo != target {
		return false
	}
	cost, ok := w.firstOK(from, target)
	if !ok {
		return false
	}
	w.firstJoins.add(1)
	w.runFirst(from, target, cost)
	return true
}

// localWait reports whether t, about to park, waits in a wait that only
// another task ends: an armed wait (an event, a channel, a join) with no
// timer (a sleep, a timeout), no I/O and no host call. Only such a wait
// runs the lifo slot's task first (act): t stays on this worker's stack
// meanwhile, so a wake from elsewhere (a timer that a worker fires for a
// stalled one, a completion, a host call's end) could not run it on
// another worker until the nested slice ends.
func localWait(t *Task) bool {
	if t.wokenBy() != phArmed || t.has(flagCancel) || t.tm != nil && t.tm.owner != nil {
		return false
	}
	if st := t.io(); st != nil && st.pending() {
		return false
	}
	in := t.x.Request().Intr
	return in != nil && in.ID < vmloop.HostIntrinsicBase
}

// firstOK reports whether target, in w's lifo slot, may run nested in
// the slice of from, running on w: not when the worker is already
// running a task first (one level: a wait inside it parks as usual);
// not for another engine's task (the CPU profile's labels are the
// engine's); not while the worker traces, checks long slices or is
// asked for a CPU sample (each follows one slice per dispatch); not when
// a pick would look at something first (a due timer, the inject queue
// and the backend after a slice's worth of reductions, a kick, a stop of
// the world); and not when from's slice has no more left than a pick
// from the slot costs. A nested run is not a pick for find's cadences
// (the backend every 16 picks, the inject queue every 32, Go's scheduler
// every 64): those count the worker's picks, one at each slice's end at
// least, and the slice's worth of reductions bounds what runs between
// two looks either way. It returns the pick's cost when it says yes.
func (w *worker) firstOK(from, target *Task) (cost int64, ok bool) {
	if w.first || target == from || target.engine != from.engine ||
		w.tr != nil || w.sliceT0 != 0 || w.spent >= injectEvery {
		return 0, false
	}
	cost = lifoCost(target.engine.cfg.Load().ReductionLimit)
	if w.left <= cost || w.sampleReq.Load() != 0 || w.s.kick.Load() || w.stop.Load() || w.due() {
		return 0, false
	}
	return cost, true
}

// runFirst takes target from w's lifo slot and runs its slice nested in
// from's, on from's budget less cost, a pick's (firstOK said yes).
func (w *worker) runFirst(from, target *Task, cost int64) {
	w.lifo = nil
	w.left -= cost
	w.spent += cost
	w.first = true
	w.dispatches.add(1)
	w.enter(target)
	w.slice(target, &w.left)
	w.running = from
	w.cur = from.ex()
	w.first = false
	// A stop meant for this worker's running task that landed on target
	// (a kick, a stop of the world, a sample request: each stays set
	// until it is answered) is from's now: its slice ends at its next
	// safe point. Looked at after cur names from's Exec again; cur is a
	// plain word, so a stop made in between may still land on target and
	// be missed here: from's slice then ends at its budget, and the next
	// pick answers it (worker.cur).
	if w.s.kick.Load() || w.stop.Load() || w.sampleReq.Load() != 0 {
		from.ex().Stop()
	}
}

// waitFirst runs target first for t, about to park in a local wait
// (localWait), and reports whether that run woke t: t then goes on in
// its slice with its request to resume (begin), and does not park.
func (w *worker) waitFirst(t, target *Task, cost int64) bool {
	w.runFirst(t, target, cost)
	if delivered(t.wokenBy()) && !t.has(flagCancel) {
		w.firstWoken.add(1)
		t.rs |= rsResume
		return true
	}
	return false
}

// TimeoutSet reports whether t's next wait has a one-shot timeout
// (time.timeout) not yet taken: a join does not run its target first
// then, as its wait is bounded from the request on.
func (c *Control) TimeoutSet(t *Task) bool { return t.timeoutSet() }

// timeoutSet is TimeoutSet; only the worker running t calls it.
func (t *Task) timeoutSet() bool { return t.tm != nil && t.tm.hasTimeout }
