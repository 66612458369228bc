package sched

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/jtrace"
	"github.com/jadevm/jade/vmloop"
)

// I/O (spec §3.2, S-5, S-8, S-9).
//
// Each worker owns one completion backend (an io_uring ring opened on its
// locked OS thread with the owner-thread flags, or the epoll emulation),
// opened by Config.OpenIO when the worker starts and closed on that thread
// when it stops. A task's socket or file operation is submitted to the
// backend of the worker running it, with an evpoll.Token that indexes the
// worker's table of (task, wait generation); the task then parks like any
// waiter. The scheduler never learns what an operation means: a completion
// is a wake of a token plus a result (the syscall's result), delivered like
// a host completion (CompleteHost), so a completion that finds the wait
// stale (the task was cancelled) is dropped — and a descriptor it produced
// (accept, open) or one it was about to hand over (connect) is closed
// (every backend forgets it first), so nothing leaks. Descriptors named by
// operations are FDs with a reference per operation in flight (fd.go).
//
// A timeout does not wake an I/O wait: its fire cancels the operation on
// the owning worker (where the timer was armed) and marks the record
// timed out, and the task stays parked until the operation's final
// completion. That completion says what happened: -ECANCELED means the
// operation did nothing and the task gets its TimeoutError (or, for the
// rest of a write that sent bytes before, that count: the bus decides);
// a result means the operation won the race and the task gets that result
// (bytes read or written, a new connection). So a timed-out wait never loses
// what its operation did, and the buffer is handed back only once no
// backend holds it. The price is that a timeout is as late as the cancel:
// an operation that cannot be interrupted (a regular-file op on epoll's
// blocking pool) ends its wait with its real result when it finishes.
//
// The worker's park is its backend's Wait, with the timer deadline as the
// timeout, and an unpark is the backend's Wake (io_uring MSG_RING, an
// eventfd for epoll): one blocking call serves completions, timers and
// wake-ups, with no helper thread. A busy worker with operations in flight
// polls its backend without blocking when its local queue runs dry and
// every ioPollEvery dispatches (Wait(0): one enter submits the SQEs queued
// since and reaps what completed), so completions are not starved by
// running tasks.

// readier is a backend that can say whether a poll would find a
// completion before it submits anything (uring.Ring.Ready).
type readier interface{ Ready() bool }

// newWorkerIO wraps backend b for a worker.
func newWorkerIO(b evpoll.Backend) *workerIO {
	x := &workerIO{b: b}
	if r, ok := b.(readier); ok {
		x.ready = r.Ready
	}
	return x
}

// ioRec is one in-flight operation of a worker. Owner only.
type ioRec struct {
	t   *Task
	gen uint64
	// e is t's engine, whose in-flight count the completion gives back:
	// a completion may come after t ended and its record was reused, so
	// nothing but the wake (generation-checked) goes through t.
	e    *Engine
	kind evpoll.Kind
	// fd is the descriptor the operation names (its reference is dropped
	// at the final completion), or nil (Open, Close).
	fd *FD
	// id is the operation's id in the backend, for a timeout's cancel.
	id evpoll.OpID
	// timedOut: the wait's timeout fired and cancelled the operation; a
	// cancelled completion then ends the wait as timed out.
	timedOut bool
	// task is t's id, for the trace's completion event (t may be reused).
	task uint64
	// poll: a readiness poll of a wait with several cases (SubmitPoll);
	// its completion, whatever its result, completes the wait with val.
	poll bool
	val  int64
}

// ioTimedOut is the result value that tells TakeIO a wait timed out and
// its operation did nothing (outside the int32 range of syscall results).
const ioTimedOut = -1 << 40

// workerIO is a worker's completion backend and its in-flight table.
type workerIO struct {
	b evpoll.Backend
	// ready is the backend's Ready (uring.Ring), or nil: whether a poll
	// would reap something without first submitting queued operations.
	ready func() bool
	recs  records[ioRec]
	n     int // operations in flight (owner only)
	comps []evpoll.Completion
}

// ioState is the I/O part of a task (allocated on first use).
type ioState struct {
	owner *worker     // worker whose backend holds the operation, or nil
	id    evpoll.OpID // the operation, for Cancel
	op    *evpoll.Op  // the operation as submitted (for the dispatcher)
	fd    *FD         // the descriptor op names, or nil
	// rec and gen name the operation's record in owner's table and the
	// wait it ends, for ArmTimer (owner's thread only).
	rec uint32
	gen uint64
	// spare is an operation whose final completion was delivered, kept for
	// the task's next one (IOOp): an I/O loop allocates none per operation.
	spare *evpoll.Op
	// owned lists the FDs the task owns (closed when it ends); guarded by
	// the task's mu, taken (nil) when the task is marked ended.
	owned []*FD
	// polls are the readiness polls of t's last wait (SubmitPoll), to be
	// cancelled when t is next dispatched; the worker running t only.
	polls []pollOp
}

// pending reports whether operations of t's last wait may still be in a
// backend: dropTaskIO must run when t is next dispatched.
func (st *ioState) pending() bool { return st.owner != nil || len(st.polls) != 0 }

// ErrNoIO is wrapped when a worker has no completion backend.
var ErrNoIO = errors.New("no I/O backend")

// IOBackend returns the name of the completion backend of the first
// worker ("io_uring", "epoll", ...), or "" before it started or without
// one.
func (s *Scheduler) IOBackend() string {
	for _, w := range s.workers {
		if x := w.io.Load(); x != nil {
			return x.b.Name()
		}
	}
	return ""
}

// IOName returns the name of the completion backend of the worker
// running t ("io_uring", "epoll", ...), or "" when that worker has none:
// the bus names it in the errors of the sockets it makes for t. Called
// on t's worker.
func (c *Control) IOName(t *Task) string {
	if x := t.runner().io.Load(); x != nil {
		return x.b.Name()
	}
	return ""
}

// IOStats sums the counters of every worker's backend.
func (s *Scheduler) IOStats() evpoll.Stats {
	var st evpoll.Stats
	for _, w := range s.workers {
		x := w.io.Load()
		if x == nil {
			continue
		}
		st.Add(x.b.Stats())
	}
	return st
}

// SubmitIO starts op for t (running on a worker) and arms t's wait for its
// completion; the caller returns ActSuspend. f is the descriptor op names
// (nil for Open and Close): the operation holds a reference on it until
// its final completion, and a closing f refuses it (ErrFDClosed). The
// engine's inFlightIO limit applies (ErrLimit), and a backend without room
// for the operation is reported as that limit too.
func (c *Control) SubmitIO(t *Task, op *evpoll.Op, f *FD) error {
	w := t.runner()
	x := w.io.Load()
	if x == nil {
		return fmt.Errorf("sched: io: worker %d: %w: %s", w.id, ErrNoIO, w.ioErr)
	}
	e := t.engine
	lim := e.cfg.Load().Limits.InFlightIO
	if err := e.reserve(&e.ioOps, lim, "io", "operations in flight", "inFlightIO"); err != nil {
		return err
	}
	if f != nil && !f.acquire() {
		e.ioOps.Add(-1)
		return fmt.Errorf("sched: io: %s: fd %d: %w", op.Kind, f.num, ErrFDClosed)
	}
	if op.Kind == evpoll.Close {
		// Backends that keep per-descriptor state (epoll) must forget the
		// descriptor before its number can be reused.
		w.s.forgetFD(w, op.Fd)
	}
	tok := t.armHost()
	idx := x.recs.put(ioRec{t: t, gen: tok.gen, e: e, kind: op.Kind, fd: f, task: t.id})
	st := t.ioState()
	id, err := x.b.Submit(op, evpoll.Token(idx))
	if err != nil {
		x.recs.take(idx)
		e.ioOps.Add(-1)
		t.disarm()
		if f != nil {
			w.s.releaseFD(f, w, 0)
		}
		if errors.Is(err, evpoll.ErrTooMany) {
			// The backend's table is full: an exhausted resource the
			// program can catch and back off from, like the engine limit.
			return fmt.Errorf("sched: io: %s: %w: %w", op.Kind, ErrLimit, err)
		}
		return fmt.Errorf("sched: io: %s: %w", op.Kind, err)
	}
	x.recs.slots[idx].v.id = id
	if f != nil {
		f.record(w, id)
	}
	x.n++
	st.owner, st.id, st.op, st.fd, st.rec, st.gen = w, id, op, f, idx, tok.gen
	if st.spare == op {
		st.spare = nil // resubmitted (the rest of a short write)
	}
	if w.tr != nil {
		w.traceTask(jtrace.KindIOSubmit, t, uint64(op.Kind))
	}
	return nil
}

// IOOp returns v as an operation for t's next SubmitIO, in the record its
// last completed operation used, or a new one. Only the worker running t.
func (c *Control) IOOp(t *Task, v evpoll.Op) *evpoll.Op {
	op := new(evpoll.Op)
	if st := t.io(); st != nil && st.spare != nil {
		op, st.spare = st.spare, nil
	}
	*op = v
	return op
}

// IOResult is how a task's last operation ended (TakeIO).
type IOResult struct {
	Op *evpoll.Op // the operation as submitted
	FD *FD        // the descriptor it named, or nil
	// Res is the syscall's result: bytes, a descriptor, 0 or -errno.
	Res int32
	// TimedOut: the wait's timeout cancelled the operation before it did
	// anything (Res is -ECANCELED).
	TimedOut bool
	// Done is false when the task was woken without the operation's final
	// completion (the backend may still hold Op).
	Done bool
}

// TakeIO returns how the operation t submitted last ended, once, on the
// worker resuming t.
func (c *Control) TakeIO(t *Task) IOResult {
	st := t.io()
	if st == nil {
		return IOResult{}
	}
	r := IOResult{Op: st.op, FD: st.fd}
	st.op, st.fd = nil, nil
	v, _, _, ok := c.TakeHostResult(t)
	if !ok {
		return r // woken without its completion: the backend may still hold op
	}
	// Its final completion came: no backend refers to op any more, so the
	// next IOOp may reuse it (the caller reads it until then).
	st.spare = r.Op
	r.Done = true
	if v.Int() == ioTimedOut {
		r.Res, r.TimedOut = -int32(syscall.ECANCELED), true
	} else {
		r.Res = int32(v.Int())
	}
	return r
}

// dropTaskIO runs when t is dispatched after an I/O wait: an operation
// whose completion t did not receive (t was cancelled) is cancelled. Its
// completion still arrives at the owner (with -ECANCELED, or its result
// if it won the race), which finds the wait stale, closes any descriptor
// it produced and drops the operation's reference on its FD.
func dropTaskIO(t *Task) {
	io := t.io()
	cancelPolls(io)
	o := io.owner
	if o == nil {
		return
	}
	io.owner = nil
	t.mu.Lock()
	done := t.hasHostResultLocked()
	t.mu.Unlock()
	if !done {
		if x := o.io.Load(); x != nil {
			x.b.Cancel(io.id) // ErrNotPending: it completed meanwhile
		}
	}
}

// pollIO reaps completions from w's backend, waiting up to timeout
// (nanoseconds; -1 without limit, 0 polls), and wakes their tasks onto
// w's local queue; it returns how many it reaped. The caller then wakes
// other workers if there is more than w runs next (shareBacklog).
func (w *worker) pollIO(x *workerIO, timeout int64) int {
	d := time.Duration(timeout)
	if timeout < 0 {
		d = -1
	}
	if x.comps == nil {
		x.comps = make([]evpoll.Completion, 256)
	}
	n, err := x.b.Wait(d, x.comps)
	if err != nil {
		// A backend failing is not recoverable here; the worker keeps
		// running tasks and polls again later.
		return 0
	}
	w.reaping = true // its wakes notify nobody: the caller does once
	for _, c := range x.comps[:n] {
		rec := x.recs.take(uint32(c.Token))
		x.n--
		rec.e.ioOps.Add(-1)
		if rec.fd != nil {
			w.s.releaseFD(rec.fd, w, rec.id)
		}
		tok := Token{rec.t, rec.gen}
		if w.tr != nil {
			w.tr.emit(jtrace.Event{Kind: jtrace.KindIOComplete, Task: rec.task, Arg: uint64(int64(c.Res))})
		}
		v := int64(c.Res)
		if rec.poll {
			v = rec.val
		}
		if rec.timedOut && (c.Cancelled() || c.Res == -int32(syscall.ECANCELED)) {
			v = ioTimedOut
		}
		if w.s.completeHost(w, tok, vmloop.I64(v), nil, nil, nil) {
			continue
		}
		// Nobody takes the result: close what it would have handed over.
		if c.Res >= 0 && (rec.kind == evpoll.Accept || rec.kind == evpoll.Open) {
			w.s.closeFD(int(c.Res))
		} else if rec.kind == evpoll.Connect {
			w.s.closeFDRef(rec.fd)
		}
	}
	w.reaping = false
	return n
}

// ioStopGrace bounds how long a stopping worker waits for the final
// completions of the operations it cancels (stopIO). A socket op's cancel
// completes at once; an op that cannot be interrupted (a regular-file op
// on epoll's blocking pool) may not end within it.
const ioStopGrace = 2 * time.Second

// stopIO runs on a stopping worker before its backend closes: it cancels
// every operation still in flight on w's backend and reaps their final
// completions (up to ioStopGrace). The backend's Close discards what it
// has not returned, so without this a descriptor whose close(2) was left
// to an operation's completion (a task cancelled with a read in flight:
// its end closed the FD while the read held a reference) stayed open, and
// so did one an accept or open produced for a task that had ended. The
// reap goes through pollIO: every completion drops its FD reference
// (closing the number when it was the last) and closes what it would
// have handed to a task that no longer waits. A completion for a task
// still live (one abandoned at Shutdown's deadline) wakes it onto w's
// queue, which nobody runs any more: abandoned means untouched.
func (w *worker) stopIO(x *workerIO) {
	if x.n == 0 {
		return
	}
	for i := range x.recs.slots {
		if r := &x.recs.slots[i].v; r.t != nil {
			x.b.Cancel(r.id) // ErrNotPending: completed, not yet reaped
		}
	}
	deadline := time.Now().Add(ioStopGrace)
	for x.n > 0 {
		rem := time.Until(deadline)
		if rem <= 0 {
			return
		}
		w.pollIO(x, int64(min(rem, 10*time.Millisecond)))
	}
}

// timeoutIO is the fire of the timeout of the I/O wait whose record is
// idx in w's table: if that wait is still waiting for its operation, the
// operation is cancelled and its completion will end the wait as timed
// out (unless it did its work first). Owner thread only.
func (w *worker) timeoutIO(idx uint32, t *Task, gen uint64) {
	x := w.io.Load()
	if x == nil || int(idx) >= len(x.recs.slots) {
		return
	}
	r := &x.recs.slots[idx].v
	if r.t != t || r.gen != gen {
		return // completed (and perhaps the slot reused) before the fire
	}
	r.timedOut = true
	x.b.Cancel(r.id) // ErrNotPending: its completion is ready, not reaped
}

// closeFD closes a descriptor that no operation names: every worker's
// backend forgets it first (epoll and kqueue keep per-descriptor state),
// then Config.CloseFD closes it. Any goroutine.
func (s *Scheduler) closeFD(fd int) {
	s.forgetFD(nil, fd)
	if s.closeFn != nil {
		s.closeFn(fd)
	}
}

// forgetFD makes every backend but w's forget fd.
func (s *Scheduler) forgetFD(w *worker, fd int) {
	for _, o := range s.workers {
		if y := o.io.Load(); o != w && y != nil {
			if f, ok := y.b.(interface{ Forget(fd int) }); ok {
				f.Forget(fd)
			}
		}
	}
}

// takeEnd marks t ended and returns the FDs it still owns, in one
// critical section (ownLocked refuses an ended task, so no FD joins the
// list afterwards).
func (t *Task) takeEnd() (owned []*FD) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ended = true
	if st := t.io(); st != nil {
		owned, st.owned = st.owned, nil
	}
	return owned
}

// ioState returns t's I/O state, creating it (under the lock, and
// published through the atomic pointer for readers without it).
func (t *Task) ioState() *ioState {
	if st := t.io(); st != nil {
		return st
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ioStateLocked()
}

func (t *Task) ioStateLocked() *ioState {
	r := t.rareLocked()
	st := r.io.Load()
	if st == nil {
		st = &ioState{}
		r.io.Store(st)
	}
	return st
}
