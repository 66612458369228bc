package sched

import (
	"errors"
	"fmt"
	"time"

	"github.com/jadevm/jade/evpoll"
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
// stale (the task was cancelled or timed out) is dropped — and a descriptor
// it produced (accept, open) or one it was about to hand over (connect) is
// closed (CloseFD: every backend forgets it first), so nothing leaks.
//
// The worker's park is its backend's Wait, with the timer deadline as the
// timeout, and an unpark is the backend's Wake (io_uring MSG_RING, an
// eventfd for epoll): one blocking call serves completions, timers and
// wake-ups, with no helper thread. A busy worker with operations in flight
// polls its backend without blocking when its local queue runs dry and
// every ioPollEvery dispatches (Wait(0): one enter submits the SQEs queued
// since and reaps what completed), so completions are not starved by
// running tasks.

// ioRec is one in-flight operation of a worker. Owner only.
type ioRec struct {
	t   *Task
	gen uint64
	// e is t's engine, whose in-flight count the completion gives back:
	// a completion may come after t ended and its record was reused, so
	// nothing but the wake (generation-checked) goes through t.
	e      *Engine
	kind   evpoll.Kind
	sockFd int // Connect: the socket to close if the result is dropped; else -1
}

// workerIO is a worker's completion backend and its in-flight table.
type workerIO struct {
	b     evpoll.Backend
	recs  records[ioRec]
	n     int // operations in flight (owner only)
	comps []evpoll.Completion
}

// ioState is the I/O part of a task (allocated on first use).
type ioState struct {
	owner *worker     // worker whose backend holds the operation, or nil
	id    evpoll.OpID // the operation, for Cancel
	op    *evpoll.Op  // the operation as submitted (for the dispatcher)
	// spare is an operation whose final completion was delivered, kept for
	// the task's next one (IOOp): an I/O loop allocates none per operation.
	spare *evpoll.Op
	// onEnd runs when the task completes (closing the descriptors it
	// owns); guarded by the task's mu.
	onEnd []func()
}

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
// completion; the caller returns ActSuspend. sockFd is a descriptor to
// close if the task never takes the result (connect's socket), or -1. The
// engine's inFlightIO limit applies (ErrLimit).
func (c *Control) SubmitIO(t *Task, op *evpoll.Op, sockFd int) error {
	w := t.w
	x := w.io.Load()
	if x == nil {
		return fmt.Errorf("sched: io: worker %d: %w: %s", w.id, ErrNoIO, w.ioErr)
	}
	e := t.engine
	lim := e.cfg.Load().Limits.InFlightIO
	if err := e.reserve(&e.ioOps, lim, "io", "operations in flight", "inFlightIO"); err != nil {
		return err
	}
	if op.Kind == evpoll.Close {
		// Backends that keep per-descriptor state (epoll) must forget the
		// descriptor before its number can be reused.
		w.s.forgetFD(w, op.Fd)
	}
	tok := t.armHost()
	idx := x.recs.put(ioRec{t: t, gen: tok.gen, e: e, kind: op.Kind, sockFd: sockFd})
	st := t.ioState()
	id, err := x.b.Submit(op, evpoll.Token(idx))
	if err != nil {
		x.recs.take(idx)
		e.ioOps.Add(-1)
		t.disarm()
		return fmt.Errorf("sched: io: %s: %w", op.Kind, err)
	}
	x.n++
	st.owner, st.id, st.op = w, id, op
	if st.spare == op {
		st.spare = nil // resubmitted (the rest of a short write)
	}
	return nil
}

// IOOp returns v as an operation for t's next SubmitIO, in the record its
// last completed operation used, or a new one. Only the worker running t.
func (c *Control) IOOp(t *Task, v evpoll.Op) *evpoll.Op {
	op := new(evpoll.Op)
	if st := t.io.Load(); st != nil && st.spare != nil {
		op, st.spare = st.spare, nil
	}
	*op = v
	return op
}

// TakeIO returns the operation t submitted last and its result (the
// syscall's result: bytes, a descriptor, 0 or -errno), once, on the worker
// resuming t. ok is false when t was woken without a completion (a timeout).
func (c *Control) TakeIO(t *Task) (op *evpoll.Op, res int32, ok bool) {
	st := t.io.Load()
	if st == nil {
		return nil, 0, false
	}
	op = st.op
	st.op = nil
	v, _, _, ok := c.TakeHostResult(t)
	if !ok {
		// Woken without its completion: the backend may still hold op.
		return op, 0, false
	}
	// Its final completion came: no backend refers to op any more, so the
	// next IOOp may reuse it (the caller reads it until then).
	st.spare = op
	return op, int32(v.Int()), true
}

// dropTaskIO runs when t is dispatched after an I/O wait: an operation
// whose completion t did not receive (t was cancelled or timed out) is
// cancelled. Its completion still arrives at the owner (with -ECANCELED,
// or its result if it won the race), which finds the wait stale and
// closes any descriptor it produced.
func dropTaskIO(t *Task) {
	io := t.io.Load()
	o := io.owner
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
// (nanoseconds; -1 without limit, 0 polls), and wakes their tasks.
func (w *worker) pollIO(x *workerIO, timeout int64) {
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
		return
	}
	for _, c := range x.comps[:n] {
		rec := x.recs.take(uint32(c.Token))
		x.n--
		rec.e.ioOps.Add(-1)
		tok := Token{rec.t, rec.gen}
		if w.s.completeHost(w, tok, vmloop.I64(int64(c.Res)), nil, nil) {
			continue
		}
		// Nobody takes the result: close what it would have handed over.
		fd := rec.sockFd
		if (rec.kind == evpoll.Accept || rec.kind == evpoll.Open) && c.Res >= 0 {
			fd = int(c.Res)
		}
		if fd >= 0 {
			w.s.closeFD(fd)
		}
	}
}

// CloseFD closes a descriptor that no operation uses any more (a socket
// whose connect failed, the handles of a task that ended): every worker's
// backend forgets it first (epoll and kqueue keep per-descriptor state),
// then Config.CloseFD closes it. Any goroutine.
func (c *Control) CloseFD(fd int) { c.s.closeFD(fd) }

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

// OnEnd registers f to run when t completes, whatever its outcome (on the
// worker completing it, before joiners are woken); if t has completed
// already, f runs now. The bus uses it to close the descriptors a task
// owns, so a task that traps, fails or is cancelled leaks none.
func (c *Control) OnEnd(t *Task, f func()) {
	t.mu.Lock()
	t.watch() // before the look: see finish
	if t.ended || t.State() == Completed {
		t.mu.Unlock()
		f()
		return
	}
	st := t.ioStateLocked()
	st.onEnd = append(st.onEnd, f)
	t.mu.Unlock()
}

// takeEndHooks marks t ended and returns its end hooks.
func (t *Task) takeEndHooks() []func() {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.takeEndHooksLocked()
}

func (t *Task) takeEndHooksLocked() []func() {
	t.ended = true
	st := t.io.Load()
	if st == nil {
		return nil
	}
	hooks := st.onEnd
	st.onEnd = nil
	return hooks
}

// ioState returns t's I/O state, creating it (OnEnd may do so concurrently
// from another worker, hence the lock and the atomic pointer).
func (t *Task) ioState() *ioState {
	if st := t.io.Load(); st != nil {
		return st
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ioStateLocked()
}

func (t *Task) ioStateLocked() *ioState {
	st := t.io.Load()
	if st == nil {
		st = &ioState{}
		t.io.Store(st)
	}
	return st
}
