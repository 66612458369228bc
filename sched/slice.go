package sched

import (
	"github.com/jadevm/jade/internal/jtrace"
	"github.com/jadevm/jade/vmloop"
)

// One slice of a task on a worker: running it, carrying out the
// dispatcher's actions, and ending, requeueing or publishing it.

// slice runs t until its slice ends: it completes, suspends, yields or
// uses up *budget.
func (w *worker) slice(t *Task, budget *int64) {
	ex := t.ex()
	if ex.Stopped() {
		// Where a stop is cleared (and samplePreempted, during a slice a
		// sample request stopped): the stop that ended the last slice, a
		// kick meant for an earlier slice (kickOne), a cancel's, a sample
		// request's. Cleared before the cancel flag is read (begin):
		// Cancel sets that flag before it stops the Exec, so a cancel's
		// stop is never lost.
		ex.ClearStop()
	}
	if w.begin(t, budget) {
		w.runs(t, budget)
	}
}

// begin does what comes before t's bytecode runs in a slice: its ended
// wait's timer and I/O dropped, a broadcast's rest, a cancel, and the
// completion of the request t waited in (or the next steps of one in
// steps). It reports whether t's bytecode runs next. A task whose wait
// was won while it had not parked yet (park) begins here too, within
// its slice (act).
func (w *worker) begin(t *Task, budget *int64) bool {
	s := w.s
	ex := t.ex()
	if t.tm != nil && t.tm.owner != nil {
		dropTaskTimer(w, t) // its wait ended: the timer must not fire later
	}
	if st := t.io(); st != nil && st.pending() {
		dropTaskIO(t)
	}
	// One load of the rare part for both of its dispatch-time fields: a
	// broadcast's rest and a request's next steps (the worker running t
	// sets both, so a rare part made after this load has neither).
	r := t.rare.Load()
	if r != nil && r.bcast != nil && w.wakeMore(t, r) {
		w.endSlice(t, jtrace.EndYield) // the next chunk in its next dispatch
		return false
	}
	if t.has(flagCancel) {
		if t.rs&rsResume != 0 {
			t.rs &^= rsResume | rsVoid
			w.abandonWait(t)
		}
		if w.tr != nil || w.sliceT0 != 0 {
			w.traceEnd(t, jtrace.EndCancel)
		}
		s.finish(w, t, &Outcome{Kind: Cancelled})
		return false
	}
	if r != nil && r.again {
		// the next steps of its pending request
		r.again = false
		a, ok := w.more(t, ActMore, budget)
		if !ok || a != ActContinue && !w.act(t, a, budget) {
			return false
		}
	}
	if t.rs&rsResume != 0 {
		t.rs &^= rsResume
		t.noteTimeout(t.disarm())
		if t.rs&rsVoid != 0 {
			// An event wait the VM loop armed, which no timeout bounds:
			// it ends with no value, as the dispatcher would end it
			// (BenchmarkPingPong).
			t.rs &^= rsVoid
			if err := ex.CompleteVoid(); err != nil {
				ex.SetTrap(vmloop.TrapIntrinsic, err.Error())
				return w.act(t, ActTrapped, budget)
			}
			return true
		}
		// A resumed request that completes goes straight on: the task has
		// received its result, and a cancel that arrived meanwhile is
		// observed at its next safe point, not here (where it would end
		// the task with the result unseen).
		a := s.disp.Resume(t, ex.Request())
		w.chargeCopies(ex, budget)
		if a == ActMore { // a joined result imported in steps
			var ok bool
			if a, ok = w.more(t, a, budget); !ok {
				return false
			}
		}
		if a != ActContinue && !w.act(t, a, budget) {
			return false
		}
	}
	return true
}

// runs runs t's bytecode until its slice ends, carrying out its requests.
func (w *worker) runs(t *Task, budget *int64) {
	s := w.s
	ex := t.ex()
	for {
		sig := ex.Run(*budget)
		w.spent += *budget - ex.Left()
		*budget = ex.Left()
		switch sig {
		case vmloop.SigCompleted:
			if k, bits, ok := ex.ScalarResult(); ok {
				w.endScalar(t, k, bits)
			} else {
				w.end(t, &Outcome{Kind: Success, Value: ex.Result(), hostBytes: ex.ResultHostBytes()})
			}
			return
		case vmloop.SigThrown:
			w.end(t, &Outcome{Kind: Failure, Value: ex.Thrown(), Stack: ex.ThrownStack()})
			return
		case vmloop.SigTrapped:
			w.end(t, &Outcome{Kind: Trapped, Trap: ex.Trap(), Stack: ex.TrapStack()})
			return
		case vmloop.SigPreempted:
			if w.sampleReq.Load() != 0 && w.samplePreempted(t, *budget) {
				continue // the stop was a sample request's only
			}
			if *budget <= 0 {
				// A whole slice: a task that runs long gets register and
				// frame stacks no other task's share a cache line with
				// (vmloop.Exec.Isolate; once, then a no-op check).
				ex.Isolate()
			}
			w.endSlice(t, jtrace.EndPreempted)
			return
		case vmloop.SigYield:
			// A YIELD the loop completed (a task record's): charged as its
			// request is, then answered as act answers ActYield.
			*budget -= intrCost
			w.spent += intrCost
			if w.yieldInPlace(t, *budget) {
				continue
			}
			w.endSlice(t, jtrace.EndYield)
			return
		case vmloop.SigIntrinsic, vmloop.SigWait:
			req := ex.Request()
			c := int64(intrCost)
			if req.Op == vmloop.SPAWN {
				c = spawnCost(t.engine.cfg.Load().ReductionLimit)
			}
			*budget -= c
			w.spent += c
			var a Action
			if sig == vmloop.SigWait {
				// an event wait the VM loop armed (vmhook.Wait): a
				// request whose answer suspended the task
				t.rs |= rsVoid
				a = ActSuspend
			} else if in := req.Intr; in != nil && in.ID >= vmloop.HostIntrinsicBase {
				a = w.callHost(t, req, in)
			} else {
				a = s.disp.Intrinsic(t, req)
			}
			w.chargeCopies(ex, budget)
			if a == ActMore {
				var ok bool
				if a, ok = w.more(t, a, budget); !ok {
					return
				}
			}
			if !w.act(t, a, budget) {
				return
			}
		}
	}
}

// callHost has the dispatcher call host intrinsic in for t's request req,
// timed (the worker's host time, a long call's report) and sampled (a CPU
// sample lands at the call). Out of runs, which the profile keeps inlined
// into slice only while it stays small.
//
//go:noinline
func (w *worker) callHost(t *Task, req *vmloop.Request, in *vmloop.Intrinsic) Action {
	if w.lazyPush {
		w.flushPushes() // a host call may hold the worker up
	}
	if w.sampleReq.Load() != 0 {
		w.sampleCall(t) // a CPU sample lands at the call (profile.go)
	}
	t0 := nanotime()
	a := w.s.disp.Intrinsic(t, req)
	d := nanotime() - t0
	addTo(&w.times.host, d)
	if w.sampleReq.Load() != 0 {
		w.sampleHost(t, in.Name, d) // one came during the call
	}
	if lim := int64(t.engine.cfg.Load().LongCall); lim > 0 && d > lim {
		w.long(t, jtrace.LongCall, d, lim)
	}
	return a
}

// chargeCopies charges the slice what the request just handled copied
// across the heap boundary (vmloop.Exec.TakeCopyCharge: a spawn's
// arguments, a joined result), so that a task copying large values is
// preempted at its next safe point instead of copying again in the same
// slice.
func (w *worker) chargeCopies(ex *vmloop.Exec, budget *int64) {
	if c := ex.TakeCopyCharge(); c > 0 {
		*budget -= c
		w.spent += c
	}
}

// abandonWait ends the wait of a cancelled task that will not resume: a
// completer that won its wake before the cancel carried a result, which
// the dispatcher releases or passes on (wait.go).
func (w *worker) abandonWait(t *Task) {
	if ph := t.wokenBy(); delivered(ph) {
		w.s.disp.Abandon(t, t.ex().Request(), ph == phSignalled)
	}
	t.disarm()
}

// act carries out a dispatcher action; it returns true when the worker
// keeps running t.
func (w *worker) act(t *Task, a Action, budget *int64) bool {
	s := w.s
	ex := t.ex()
	switch a {
	case ActContinue:
		// An intrinsic is a safe point: the budget and cancellation are
		// looked at here.
		if t.has(flagCancel) || *budget <= 0 {
			if *budget <= 0 {
				ex.Isolate() // a whole slice, ended at an intrinsic (see SigPreempted)
			}
			w.endSlice(t, jtrace.EndPreempted)
			return false
		}
		return true
	case ActYield:
		if w.yieldInPlace(t, *budget) {
			return true
		}
		w.endSlice(t, jtrace.EndYield)
		return false
	case ActSuspend:
		if n := w.lifo; n != nil && localWait(t) {
			if cost, ok := w.firstOK(t, n); ok {
				// The task woken or spawned last runs before t parks,
				// within t's slice (joinfirst.go); a wake it gives t
				// meanwhile is taken here, and t goes on without parking.
				if w.waitFirst(t, n, cost) {
					return w.begin(t, budget)
				}
			}
		}
		if w.sampleReq.Load() != 0 {
			w.takeSample(t)
		}
		w.publish(t)
		if t.has(flagCancel) {
			// Suspension points observe cancellation. The armed wait is
			// abandoned: ending it here with a cancelled phase shuts out
			// completers (a host completion, a signal from another
			// worker); one that won already has its result released, and
			// an operation submitted for it is cancelled.
			if tok, ok := t.current(); ok {
				tok.wakeAs(phCancelled)
			}
			if st := t.io(); st != nil && st.pending() {
				dropTaskIO(t)
			}
			w.abandonWait(t)
			if w.tr != nil || w.sliceT0 != 0 {
				w.traceEnd(t, jtrace.EndCancel)
			}
			s.finish(w, t, &Outcome{Kind: Cancelled})
			return false
		}
		if w.tr != nil || w.sliceT0 != 0 {
			w.traceEnd(t, jtrace.EndSuspend)
		}
		// A reused record may carry a deeper task's stacks: a task that
		// waits keeps only what it uses (TestParkedAfterDeepTasks).
		ex.Trim()
		t.rs |= rsResume
		t.link = nil // off its worker
		s.waiting.Add(1)
		if !t.park() {
			// Woken before it parked: it is Runnable again.
			s.waiting.Add(-1)
			if !w.stampSkip(t) {
				s.stampEnqueue(w, t, true)
			}
			w.local.push(t, &s.inject)
		}
		return false
	case ActThrown:
		w.end(t, &Outcome{Kind: Failure, Value: ex.Thrown(), Stack: ex.ThrownStack()})
		return false
	default: // ActTrapped
		w.end(t, &Outcome{Kind: Trapped, Trap: ex.Trap(), Stack: ex.TrapStack()})
		return false
	}
}

// end completes t with o. Where it stopped is not published: only live
// tasks are listed (a locked store per task saved).
func (w *worker) end(t *Task, o *Outcome) {
	w.ending(t, endReason(o))
	w.s.finish(w, t, o)
}

// endScalar completes t with its scalar result (ScalarResult): end's
// Success without building an Outcome (232 bytes, made and copied twice
// per task end before; ChainedSpawn, SpawnJoin).
func (w *worker) endScalar(t *Task, k vmloop.Kind, bits uint64) {
	w.ending(t, jtrace.EndComplete)
	w.s.finishScalar(w, t, k, bits)
}

// ending is what end does before finish: the profile's sample and the
// trace's end of t's slice, with reason why.
func (w *worker) ending(t *Task, why uint8) {
	if w.sampleReq.Load() != 0 {
		w.takeSample(t) // before finish recycles the Exec
	}
	if w.tr != nil || w.sliceT0 != 0 {
		w.traceEnd(t, why)
	}
}

// endSlice ends t's slice at a safe point: a cancelled task completes
// Cancelled (S-13), any other goes behind the others (S-6); why is the
// trace's reason (jtrace.EndPreempted, EndYield).
func (w *worker) endSlice(t *Task, why uint8) {
	if w.sampleReq.Load() != 0 {
		w.takeSample(t)
	}
	if t.has(flagCancel) {
		if r := t.bcastLeft(); r != nil {
			w.wakeMore(t, r) // all of it: t will not run again
		}
		w.end(t, &Outcome{Kind: Cancelled})
		return
	}
	if w.tr != nil || w.sliceT0 != 0 {
		w.traceEnd(t, why)
	}
	w.publish(t) // its stop, if any, is cleared when it next runs (slice)
	w.requeue(t)
}

// requeue puts a preempted or yielding task behind the others (S-6).
func (w *worker) requeue(t *Task) {
	t.link = nil // off its worker
	t.transition(Running, Runnable)
	if !w.stampSkip(t) {
		w.s.stampEnqueue(w, t, false)
	}
	if n := w.lifo; n != nil {
		// What t spawned or woke goes before t, not behind it: it must
		// not wait for another of t's slices. (Only the owner writes the
		// slot: a load first spares a preempted or yielding task's
		// requeue a locked swap when it is empty, BenchmarkYieldMany.)
		w.lifo = nil
		w.local.push(n, &w.s.inject)
	}
	w.local.push(t, &w.s.inject)
	w.injectFirst = true
	if len(w.s.workers) > 1 && w.local.len() > 1 {
		// Others wait behind it here: let an idle worker steal them.
		w.s.notify()
	}
}

// publish records where t stopped, for introspection.
func (w *worker) publish(t *Task) {
	fn, pc := t.ex().Loc()
	if at := uint64(fn)<<32 | uint64(uint32(pc)); t.where.Load() != at {
		// Only the worker running t writes it: a task that stops at the
		// same place each slice (a yield in a loop) stores nothing, an
		// atomic store being a locked instruction (BenchmarkYieldMany).
		t.where.Store(at)
	}
	if t.has(flagStats) {
		t.rare.Load().reductions.Store(t.ex().Reductions())
	}
}

// yieldInPlace reports whether a yield of t, with budget left, may go on
// in its slice: nothing else could run here now, so a requeue and a pick
// of t again would only cost a dispatch (BenchmarkYield). Only while no
// task waits on w (lifo slot, local ring) or in the inject queue, no
// timer is armed on w and no I/O of its backend is in flight (their
// completions are looked for at picks), no cancel, sample, stop, trace
// or per-task statistics (which count a yield's slices) want the slice
// to end, and not at the picks where find looks at the
// inject queue and hands the thread to Go's scheduler (every 32nd): a
// yielding task never keeps those from happening. Other workers' queues
// are not looked at: what waits there is run by its own worker, and
// stolen once t's slice ends (at most a slice later: S-6).
func (w *worker) yieldInPlace(t *Task, budget int64) bool {
	// Other tasks waiting here first: the common reason to hand over
	// (BenchmarkYieldMany).
	if w.local.len() != 0 || w.lifo != nil || budget <= 0 || w.tr != nil || (w.ticks+1)%32 == 0 ||
		t.flags.Load()&(flagCancel|flagStats) != 0 || t.bcastLeft() != nil || w.s.inject.len() != 0 ||
		w.timers.next != noDeadline || w.stop.Load() || w.sampleReq.Load() != 0 {
		return false
	}
	if x := w.io.Load(); x != nil && x.n > 0 {
		return false
	}
	w.ticks++
	return true
}
