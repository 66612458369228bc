package sched

import (
	"github.com/jadevm/jade/internal/jtrace"
	"github.com/jadevm/jade/vmloop"
)

// Waits armed through the Control (joins, events, host suspensions) and
// the wakes and host completions that end them; the wait word protocol
// itself is in wait.go.

// AwaitTask arms a wait of waiter (running on a worker) for target's
// completion. It returns true when target has already completed (nothing
// armed); otherwise the caller returns ActSuspend.
func (c *Control) AwaitTask(waiter, target *Task) bool {
	if target.State() == Completed {
		return true
	}
	tok := waiter.arm()
	target.mu.Lock()
	target.watch() // before the look: see finish
	if target.State() == Completed {
		target.mu.Unlock()
		waiter.disarm()
		return true
	}
	if !target.joiner1.Valid() || !target.joiner1.live() {
		target.joiner1 = tok // the slot is free, or its waiter gave up
	} else {
		r := target.rareLocked()
		r.joiners.push(evEntry{tok: tok})
	}
	target.mu.Unlock()
	return false
}

// ParkJoin registers tok, a host wait (Control.Suspend) not yet parked,
// as a watcher of target's completion whose wake completes it with i64
// result (≥ 0), as a select's join case: target's end completes the wait
// (CompleteHost's one compare-and-swap decides it against the select's
// other cases; a wake that loses takes nothing, as a task's outcome stays
// for every joiner). It returns true when target has completed already:
// nothing is registered.
func (c *Control) ParkJoin(tok Token, target *Task, result int64) (completed bool) {
	if target.State() == Completed {
		return true
	}
	target.mu.Lock()
	defer target.mu.Unlock()
	target.watch() // before the look: see finish
	if target.State() == Completed {
		return true
	}
	target.rareLocked().joiners.push(evEntry{tok: tok, tag: result + 1})
	return false
}

// EventWait arms a wait of waiter on ev. It returns true when a kept signal
// was consumed (nothing armed); otherwise the caller returns ActSuspend.
func (c *Control) EventWait(waiter *Task, ev *Event) bool {
	tok := waiter.arm()
	if ev.wait(tok) {
		waiter.disarm()
		return true
	}
	return false
}

// EventSignal wakes one waiter of ev or keeps the signal.
func (c *Control) EventSignal(from *Task, ev *Event) { ev.signal(c.s, from) }

// EventBroadcast wakes every waiter of ev. From a task with more waiters
// than one step wakes, it returns true: the caller completes the request
// with ActYield, and the rest are woken in from's next dispatches before
// it runs again (Event.broadcast).
func (c *Control) EventBroadcast(from *Task, ev *Event) (yield bool) { return ev.broadcast(c.s, from) }

// Suspend arms a wait of t that something outside the scheduler (a host
// intrinsic, later an I/O completion) ends with Wake.
func (c *Control) Suspend(t *Task) Token { return t.armHost() }

// Wake ends the wait named by tok. A stale token is a no-op (false).
func (c *Control) Wake(tok Token) bool { return c.s.wake(nil, tok) }

// CompleteHost stores the result of a suspended host intrinsic and wakes
// its task; exactly one of value, thrown and trap is used (value if both
// others are nil). Only the first completion of a wait is taken: the result
// is stored under t.mu, which refuses a second one, and the wake's CAS
// publishes it to the worker that resumes the task. When the wake finds the
// wait stale (cancelled, already woken) the result is withdrawn and false
// is returned.
func (c *Control) CompleteHost(tok Token, value vmloop.Value, thrown *vmloop.Value, trap *vmloop.TrapInfo) bool {
	return c.s.completeHost(nil, tok, value, thrown, trap, nil)
}

// CompleteHostRelease is CompleteHost of a value that holds something the
// host must take back if the task never receives it: when the task is
// cancelled after this completion won its wake and before it resumed,
// release runs with value (from the worker that ends the task, through
// DropHostResult). It does not run when false is returned.
func (c *Control) CompleteHostRelease(tok Token, value vmloop.Value, release func(vmloop.Value)) bool {
	return c.s.completeHost(nil, tok, value, nil, nil, release)
}

// CompleteHostFrom is CompleteHostRelease (release may be nil) done by
// the request of task from, running on its worker (nil: from the host):
// the woken task is enqueued there, as a task an event's signal wakes is,
// not through the queue of outside wakes. Layers above the scheduler use
// it to end one task's wait from another's intrinsic.
func (c *Control) CompleteHostFrom(from *Task, tok Token, value vmloop.Value, release func(vmloop.Value)) bool {
	return c.s.completeHost(from.worker(), tok, value, nil, nil, release)
}

// completeHost is CompleteHost run by worker w (nil outside the workers).
func (s *Scheduler) completeHost(w *worker, tok Token, value vmloop.Value, thrown *vmloop.Value, trap *vmloop.TrapInfo, release func(vmloop.Value)) bool {
	t := tok.t
	t.mu.Lock()
	if _, live := t.current(); !live || t.hasHostResultLocked() || t.wait.Load()>>phaseBits != tok.gen {
		// a stale token must not occupy the slot of a later wait
		t.mu.Unlock()
		return false
	}
	r := t.rareLocked()
	if thrown == nil && trap == nil && release == nil && value.Kind() == vmloop.KindI64 {
		r.hostInline, r.hostBits, r.hostResult = true, value.Int(), nil
	} else {
		h := r.hostSpare
		if h == nil {
			h = &hostResult{}
		}
		*h = hostResult{value: value, err: thrown, trap: trap, release: release}
		r.hostInline, r.hostResult, r.hostSpare = false, h, nil
	}
	r.hostGen = tok.gen
	t.mu.Unlock()
	if s.wake(w, tok) {
		return true
	}
	// The wait ended otherwise (a timeout, a cancel): withdraw the result
	// if it is still there. If the task took it meanwhile, it has it: say
	// so (the caller must not close a descriptor it carries). A later
	// wait's result has another generation and stays.
	t.mu.Lock()
	defer t.mu.Unlock()
	if r.hostGen != tok.gen {
		return false
	}
	if r.hostInline || r.hostResult != nil {
		r.spareHostLocked()
		r.hostInline = false
		return false
	}
	return true
}

// TakeHostResult returns and clears the result stored by CompleteHost; the
// dispatcher calls it from Resume on the worker running t.
func (c *Control) TakeHostResult(t *Task) (value vmloop.Value, thrown *vmloop.Value, trap *vmloop.TrapInfo, ok bool) {
	t.mu.Lock()
	if !t.hasHostResultLocked() {
		t.mu.Unlock()
		return vmloop.Value{}, nil, nil, false
	}
	r := t.rare.Load()
	if r.hostInline {
		v := r.hostBits
		r.hostInline = false
		t.mu.Unlock()
		return vmloop.I64(v), nil, nil, true
	}
	h := r.hostResult
	value, thrown, trap = h.value, h.err, h.trap
	r.spareHostLocked()
	t.mu.Unlock()
	return value, thrown, trap, true
}

// DropHostResult takes the result stored by CompleteHost for a task that
// will not receive it (cancelled after the completion won) and runs its
// release hook, if it has one (CompleteHostRelease).
func (c *Control) DropHostResult(t *Task) {
	t.mu.Lock()
	if !t.hasHostResultLocked() {
		t.mu.Unlock()
		return
	}
	r := t.rare.Load()
	var value vmloop.Value
	var release func(vmloop.Value)
	if h := r.hostResult; h != nil {
		value, release = h.value, h.release
	}
	r.spareHostLocked()
	r.hostInline = false
	t.mu.Unlock()
	if release != nil {
		release(value)
	}
}

// wake performs a wake and enqueues the task when it was parked; w is the
// worker doing it, or nil outside the workers.
func (s *Scheduler) wake(w *worker, tok Token) bool { return s.wakeAs(w, tok, phWoken) }

// wakeAs is wake writing the woken phase ph (wait.go).
func (s *Scheduler) wakeAs(w *worker, tok Token, ph uint64) bool {
	woke, enq := tok.wakeAs(ph)
	if enq {
		s.waiting.Add(-1)
		if !w.stampSkip(tok.t) {
			s.stampEnqueue(w, tok.t, true)
		}
		if w != nil && w.tr != nil {
			w.traceWake(tok.t)
		} else if w == nil && s.trace.on.Load() {
			s.hostTask(jtrace.KindWake, tok.t, 0)
		}
		s.enqueue(w, tok.t)
	}
	return woke
}

// WaitingTasks returns the number of tasks parked in Waiting.
func (s *Scheduler) WaitingTasks() int64 { return s.waiting.Load() }
