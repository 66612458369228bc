package sched

import (
	"errors"
	"math"
	"sync/atomic"

	"github.com/jadevm/jade/internal/jtrace"
	"github.com/jadevm/jade/internal/monoclock"
	"github.com/jadevm/jade/timerwheel"
)

// Timers (spec §4.3, S-4, S-15).
//
// An engine's wheel is sharded per (engine, worker): worker w keeps one
// timerwheel.Wheel per engine in w.timers.shards, created lazily from the
// engine's wheel geometry the first time a task of that engine arms a timer
// while running on w. Only w inserts into, advances and locally cancels its
// shards; a task that was resumed on another worker cancels its timer with
// Wheel.CancelRemote, and the owner frees the record when it drains the
// shard (Wheel.TakeCancelled).
//
// A timer's payload is an index into w.timers.recs, the owner's table of
// (task, wait generation, kind). When a timer fires, the owner wakes that
// token: a stale generation (the wait already ended) makes the fire a no-op,
// so a timer racing a join, an event or a cancel never wakes a later wait.
//
// The master clock is nanotime (monotonic, ns since the scheduler package
// started). w.timers.next caches the earliest deadline of w's shards (or
// noDeadline): every slice boundary compares it with the clock (one load and
// one compare when w has no timer; no clock read then), and a parking
// worker sleeps on its futex until exactly that deadline (a relative
// timespec, ns precision). There is no ticker and no heartbeat: a worker
// without timers parks without a timeout (S-4), and a timer 10 s ahead costs
// its worker one wake-up. Because only the owner inserts, a parked worker
// never has to be woken for an earlier timer of its own shards. A worker
// that stalls has its due timers fired by another (stall.go): every touch
// of the shards and of recs, by the owner or that thief, holds
// workerTimers.hold.

// noDeadline marks "no pending timer".
const noDeadline = math.MaxInt64

// MaxDeadline is the latest deadline a timer is filed at, about 292 years
// after the epoch: in effect never. Later ones (a deadline of noDeadline
// included, which a worker's cache reads as "no timer") are filed at it.
const MaxDeadline int64 = noDeadline - 1

// DeadlineAfter returns the clock value d nanoseconds after now,
// saturated to MaxDeadline when now + d passes the clock's range: a
// duration too long to represent means "never", not an instant that
// wrapped into the past (which would fire at once).
func DeadlineAfter(now, d int64) int64 {
	if d > MaxDeadline-now {
		return MaxDeadline
	}
	return now + d
}

// nanotime is the scheduler's master clock (internal/monoclock: the one
// the VM loop's time.now reads).
func nanotime() int64 { return monoclock.Now() }

// Now returns the master clock: monotonic nanoseconds since the runtime's
// epoch (what time.now returns to tasks).
func (s *Scheduler) Now() int64 { return nanotime() }

// Timer kinds: what a fire does beyond waking the token.
const (
	timerWake      = iota // sleep, periodic tick: the wake is the result
	timerTimeout          // a wait's timeout: the wait ends with a timeout
	timerIOTimeout        // an I/O wait's timeout: its operation is cancelled (io.go)
)

// timerRec is what a shard's payload names. Owner only.
type timerRec struct {
	t    *Task
	gen  uint64
	kind uint8
	io   uint32 // timerIOTimeout: the operation's record in the owner's I/O table
}

// workerTimers is a worker's part of every engine's wheel. Owner only,
// except remote: other workers reach a shard only through the pointer an
// armed timer keeps (taskTimer.sh), never through shards, which the owner
// grows the first time it meets an engine.
type workerTimers struct {
	shards []*timerwheel.Wheel // indexed by engine id; nil until first use
	engine []*Engine           // engine of each shard
	next   int64               // earliest deadline over shards, or noDeadline
	recs   records[timerRec]
	exp    []timerwheel.Expired
	gone   []uint64
	// remote is set by a worker that cancelled one of these timers with
	// CancelRemote (and already gave back its engine count): the owner
	// drains its shards at its next slice boundary, so cancelled entries
	// do not pile up until the next deadline. A parked owner is not woken
	// for it: it inserts nothing while parked. A thief that hands an I/O
	// timeout back (back) sets it too.
	remote atomic.Bool

	// hold says who may touch shards and recs: the owner between lock and
	// unlock, or a thief while the owner is stalled (stall.go). pub is the
	// earliest deadline over shards (noDeadline when none) published for
	// thieves: written only by the holder; a lower bound of the shards'
	// own (an owner's cancel does not raise it). back is the I/O timeouts
	// thieves fired, for the owner's backend.
	hold atomic.Uint32
	pub  atomic.Int64
	back timerBack
}

// taskTimer is the timer state of a task, allocated on first use (most
// tasks never arm one). It is touched only by the worker running the task.
type taskTimer struct {
	owner *worker           // worker whose shard holds the armed timer, or nil
	h     timerwheel.Handle // the armed timer
	// sh is the shard holding it: a worker that resumed the task cancels
	// through it, never through owner's shard list (which owner may grow
	// meanwhile, the first time it meets an engine).
	sh  *timerwheel.Wheel
	rec uint32 // its record in owner.timers.recs
	// reserved: one unit of the engine's pending-timer count is held for a
	// timer about to be armed (ReserveTimer .. ArmTimer/DropTimer).
	reserved bool
	// timedOut is set by the worker that dispatches the task when a
	// timeout won the wake (phase phTimedOut, begin), and read and
	// cleared by the dispatcher's TimedOut on that worker.
	timedOut bool
	// timeout is the one-shot timeout of the task's next wait (ns), valid
	// when hasTimeout.
	timeout    int64
	hasTimeout bool
	// deadline is the instant the timeout of the task's current timed
	// wait was armed for (ArmTimer with timeout), valid when hasDeadline:
	// a wait that goes on with a new operation (the rest of a short
	// write) re-arms it at the same instant, so the timeout bounds the
	// whole wait (WaitDeadline). TakeTimeout, which every timed wait calls
	// first, clears it: it never outlives the wait it was armed for.
	deadline    int64
	hasDeadline bool
	jobs        []*Job // the task's live periodic jobs (ended at its end); guarded by engine.jobsMu
	madeJobs    bool   // the task made a job (so its end takes jobsMu); the owner's only
}

func (t *Task) timer() *taskTimer {
	if t.tm == nil {
		t.tm = &taskTimer{}
	}
	return t.tm
}

// ErrNoWheel is wrapped by errors for timer requests of a task whose engine
// has no timer wheel.
var ErrNoWheel = errors.New("engine has no timer wheel")

// ReserveTimer checks that t (running on a worker) may arm a timer — its
// engine has a wheel and is below its pending-timer limit — and holds one
// unit of that limit for ArmTimer. A reservation not followed by ArmTimer
// must be given back with DropTimer.
func (c *Control) ReserveTimer(t *Task) error {
	e := t.engine
	if e.wheel.Load() == nil {
		return e.noWheel("timer")
	}
	tm := t.timer()
	if tm.reserved {
		return nil
	}
	lim := e.cfg.Load().Limits.PendingTimers
	if err := e.reserve(&e.timers, lim, "timer", "pending timers", "pendingTimers"); err != nil {
		return err
	}
	tm.reserved = true
	return nil
}

// DropTimer gives back a reservation that was not used.
func (c *Control) DropTimer(t *Task) {
	if t.tm != nil && t.tm.reserved {
		t.tm.reserved = false
		t.engine.timers.Add(-1)
	}
}

// ArmTimer files a timer at deadline for t's current wait (armed by
// Suspend, AwaitTask or EventWait), using the reservation ReserveTimer
// made. With timeout set, a fire ends the wait as timed out (TimedOut
// reports it on resume); otherwise the fire is the wait's normal end
// (a sleep). t must be running on a worker.
func (c *Control) ArmTimer(t *Task, deadline int64, timeout bool) {
	w := t.runner()
	tm := t.timer()
	ww := t.wait.Load()
	if w == nil || !tm.reserved || ww&phaseMask == phIdle || ww&phaseMask == phParked {
		panic("sched: ArmTimer without a running task, an armed wait and a reservation")
	}
	if timeout {
		tm.deadline, tm.hasDeadline = deadline, true
	}
	if delivered(ww & phaseMask) {
		// The wait already ended (a wake raced its registration): the
		// task will not park, so no timer is needed.
		c.DropTimer(t)
		return
	}
	tok := Token{t, ww >> phaseBits}
	tm.reserved = false
	rec := timerRec{t: t, gen: tok.gen, kind: timerWake}
	if timeout {
		rec.kind = timerTimeout
		if st := t.io(); st != nil && st.owner == w && st.gen == tok.gen {
			// The wait is an operation of w's backend (SubmitIO ran just
			// before, on this worker): the fire cancels it instead of
			// waking the task (io.go).
			rec.kind, rec.io = timerIOTimeout, st.rec
		}
	}
	tm.owner = w
	tm.sh, tm.h, tm.rec = w.addTimer(t.engine, deadline, rec)
}

// WaitDeadline returns the deadline the timeout of t's current wait was
// armed for (ArmTimer with timeout), if it had one: a wait that goes on
// with a new operation re-arms its timeout there. Only the worker running
// t.
func (c *Control) WaitDeadline(t *Task) (deadline int64, ok bool) {
	if t.tm == nil || !t.tm.hasDeadline {
		return 0, false
	}
	return t.tm.deadline, true
}

// SleepUntil arms a wait of t that its timer ends at deadline (a reserved
// timer; see ReserveTimer). The caller returns ActSuspend.
func (c *Control) SleepUntil(t *Task, deadline int64) {
	t.arm()
	c.ArmTimer(t, deadline, false)
}

// SetTimeout sets the one-shot timeout of t's next wait: the next join,
// outcome, event wait, I/O operation or blocking host call takes it (the
// bus's timedWait); one that has to wait ends with a timeout after d (d ≤
// 0: at once), one that completes at once drops it.
func (c *Control) SetTimeout(t *Task, d int64) { setTimeout(t, d) }

// setTimeout is SetTimeout; only the worker running t calls it.
func setTimeout(t *Task, d int64) {
	tm := t.timer()
	tm.timeout, tm.hasTimeout = d, true
}

// TakeTimeout returns and clears the one-shot timeout of t's next wait;
// a wait that time.timeout bounds calls it first, whether it will
// suspend or not (the deadline of the last one is forgotten too).
func (c *Control) TakeTimeout(t *Task) (d int64, ok bool) { return takeTimeout(t) }

// takeTimeout is TakeTimeout; only the worker running t calls it.
func takeTimeout(t *Task) (d int64, ok bool) {
	tm := t.tm
	if tm == nil {
		return 0, false
	}
	tm.hasDeadline = false
	if !tm.hasTimeout {
		return 0, false
	}
	tm.hasTimeout = false
	return tm.timeout, true
}

// noteTimeout marks t timed out when ph, the phase its last wait ended in
// (disarm's), says a timeout's timer won the wake (phTimedOut); only the
// worker running t calls it (begin).
func (t *Task) noteTimeout(ph uint64) {
	if ph == phTimedOut {
		t.tm.timedOut = true
	}
}

// TimedOut reports (once) whether t's last wait ended because its timeout
// fired.
func (c *Control) TimedOut(t *Task) bool {
	if t.tm == nil || !t.tm.timedOut {
		return false
	}
	t.tm.timedOut = false
	return true
}

// dropTaskTimer cancels the timer of a task whose wait ended; w is the
// worker about to run or complete it (nil outside the workers). A timer
// that already fired is gone; one in w's own shard is cancelled there; one
// in another worker's shard is cancelled remotely and its record freed by
// the owner when it drains the shard.
func dropTaskTimer(w *worker, t *Task) {
	tm := t.tm
	o := tm.owner
	tm.owner = nil
	sh := tm.sh
	tm.sh = nil
	if o == w {
		w.timers.lock()
		if sh.Cancel(tm.h) {
			w.timers.release(tm.rec, t.engine)
		}
		w.timers.unlock()
		return
	}
	if sh.CancelRemote(tm.h) {
		t.engine.timers.Add(-1) // the limit counts live timers only
		o.timers.remote.Store(true)
	}
}

// endTimers releases the timer state of a completing task: its armed timer,
// an unused reservation and its periodic jobs.
func (s *Scheduler) endTimers(w *worker, t *Task) {
	tm := t.tm
	if tm.owner != nil {
		dropTaskTimer(w, t)
	}
	if tm.reserved {
		tm.reserved = false
		t.engine.timers.Add(-1)
	}
	if tm.madeJobs {
		t.engine.endJobs(tm)
	}
}

// addTimer files rec at deadline in w's shard of engine e and returns the
// shard, the timer's handle and its record index.
func (w *worker) addTimer(e *Engine, deadline int64, rec timerRec) (*timerwheel.Wheel, timerwheel.Handle, uint32) {
	wt := &w.timers
	deadline = min(deadline, MaxDeadline)
	wt.lock()
	sh := wt.shard(e)
	idx := wt.recs.put(rec)
	h := sh.Insert(deadline, uint64(idx))
	if deadline < wt.next {
		wt.next = deadline
	}
	if deadline < wt.pub.Load() {
		w.publishNext(wt, deadline, w)
	}
	wt.unlock()
	return sh, h, idx
}

// shard returns w's shard of engine e, creating it from e's geometry.
func (wt *workerTimers) shard(e *Engine) *timerwheel.Wheel {
	id := int(e.id)
	if id >= len(wt.shards) {
		wt.shards = append(wt.shards, make([]*timerwheel.Wheel, id+1-len(wt.shards))...)
		wt.engine = append(wt.engine, make([]*Engine, id+1-len(wt.engine))...)
	}
	if sh := wt.shards[id]; sh != nil {
		return sh
	}
	sh, err := timerwheel.New(*e.wheel.Load(), nanotime())
	if err != nil {
		panic("sched: validated wheel config refused: " + err.Error()) // normalize validated it
	}
	wt.shards[id], wt.engine[id] = sh, e
	return sh
}

// release frees record idx and gives back its unit of e's timer count.
func (wt *workerTimers) release(idx uint32, e *Engine) timerRec {
	e.timers.Add(-1)
	return wt.recs.take(idx)
}

// due reports whether a timer of w may be due or was cancelled remotely
// (cheap when w has none: no clock read).
func (w *worker) due() bool {
	return w.timers.next != noDeadline && (nanotime() >= w.timers.next || w.timers.remote.Load())
}

// fire advances every shard of w to now, wakes the due timers' tokens and
// recomputes w's earliest deadline (draining remote cancels on the way).
func (w *worker) fire() {
	wt := &w.timers
	wt.remote.Store(false) // cancels from now on set it again
	wt.lock()
	defer wt.unlock()
	w.takeBack() // I/O timeouts a thief fired (stall.go)
	now := nanotime()
	next := int64(noDeadline)
	for id, sh := range wt.shards {
		if sh == nil {
			continue
		}
		e := wt.engine[id]
		wt.exp = sh.Advance(now, wt.exp[:0])
		for _, x := range wt.exp {
			w.timerLate(e, x.Deadline, now)
			w.s.fireTimer(w, wt.release(uint32(x.Payload), e))
		}
		wt.gone = sh.TakeCancelled(wt.gone[:0])
		for _, p := range wt.gone {
			wt.recs.take(uint32(p)) // the canceller gave back the count
		}
		if d, ok := sh.NextDeadline(); ok && d < next {
			next = d
		}
	}
	wt.next = next
	w.publishNext(wt, next, w)
}

// fireTimer wakes the token of a fired timer; a timeout that wins says so
// in the wake's phase (phTimedOut), which the worker that dispatches the
// task turns into its timedOut mark (begin). It writes nothing in the
// record itself: a peer firing a stalled worker's timers (stall.go) may
// win the wake of a task that armed its wait and has not parked yet,
// whose own worker then requeues it at once and may run it before a
// write after the wake would land.
func (s *Scheduler) fireTimer(w *worker, rec timerRec) {
	if rec.kind == timerIOTimeout {
		w.timeoutIO(rec.io, rec.t, rec.gen)
		return
	}
	tok := Token{rec.t, rec.gen}
	ph := uint64(phWoken)
	if rec.kind == timerTimeout {
		ph = phTimedOut
	}
	_, enq := tok.wakeAs(ph)
	if enq {
		s.waiting.Add(-1)
		if !w.stampSkip(rec.t) {
			s.stampEnqueue(w, rec.t, true)
		}
		if w.tr != nil {
			w.traceTask(jtrace.KindTimer, rec.t, 0)
			w.traceTask(jtrace.KindWake, rec.t, 0)
		}
		s.enqueue(w, rec.t)
	}
}

// parkTimeout returns how long w may sleep: -1 without timers, else the
// time to the earliest deadline (0 when one is due). Call fire first so
// that remotely cancelled timers do not cut the sleep short.
func (w *worker) parkTimeout() int64 {
	if w.timers.next == noDeadline {
		return -1
	}
	return max(0, w.timers.next-nanotime())
}
