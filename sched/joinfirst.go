package sched

// A join that runs its target first: the task a join names, spawned or
// woken by the joiner a moment ago, waits in the joiner's worker's lifo
// slot to run next on the rest of the joiner's slice. Instead of parking
// the joiner, picking the target from the slot and waking the joiner
// when the target ends (two transitions, a park, a wake, a pick and a
// resumed request), the worker runs the target's slice where the join
// is, on the joiner's budget, and the join then finds it completed. It
// is the lifo pick made early: the same task runs on the same worker on
// the same budget, charged lifoCost as the pick is (S-6: a chain of
// spawn + join still yields after about lifoPicksPerSlice links).

// RunFirst runs target's slice now, on from's worker and slice, when a
// join by from would otherwise wait for it while it waits in that
// worker's lifo slot: from is running (at its join request), target is
// Runnable in the slot, of from's engine. It reports whether target ran;
// the caller then looks at its state as a join does (it may have
// completed, waited, or been preempted). It does nothing when the
// target is elsewhere, when the worker is already running a target first
// (one level: a join inside it waits as usual), while the worker traces,
// checks long slices or is asked for a CPU sample (each follows one
// slice per dispatch), when the inject queue is due a look, or when
// from's slice has less left than a pick from the slot costs.
func (c *Control) RunFirst(from, target *Task) bool {
	w := from.worker()
	if w == nil || w.first || w.lifo.Load() != target || target.engine != from.engine ||
		w.tr != nil || w.sliceT0 != 0 || w.sampleReq.Load() != 0 ||
		w.spent >= injectEvery || c.s.kick.Load() || w.stop.Load() {
		return false
	}
	cost := lifoCost(target.engine.cfg.Load().ReductionLimit)
	if w.left <= cost {
		return false
	}
	w.lifo.Store(nil)
	w.left -= cost
	w.spent += cost
	w.first = true
	w.dispatches.Add(1)
	w.firsts.Add(1)
	target.transition(Runnable, Running)
	if f := target.flags.Load(); f&(flagStamped|flagStats) != 0 {
		w.dispatched(target, f)
	}
	target.w = w
	w.cur.Store(target.ex())
	w.running = target
	w.slice(target, &w.left)
	w.running = from
	w.cur.Store(from.ex())
	w.first = false
	// A stop meant for this worker's running task that landed on target
	// (a kick, a stop of the world, a sample request: each stays set
	// until it is answered) is from's now: its slice ends at its next
	// safe point. Looked at after cur names from's Exec again, so a stop
	// made later lands on from itself.
	if c.s.kick.Load() || w.stop.Load() || w.sampleReq.Load() != 0 {
		from.ex().Stop()
	}
	return true
}

// TimeoutSet reports whether t's next wait has a one-shot timeout
// (time.timeout) not yet taken: a join does not run its target first
// then, as its wait is bounded from the request on.
func (c *Control) TimeoutSet(t *Task) bool {
	return t.tm != nil && t.tm.hasTimeout
}
