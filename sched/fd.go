package sched

import (
	"errors"
	"sync"

	"github.com/jadevm/jade/internal/evpoll"
)

// Descriptor lifetime and ownership (spec S-9: a task's resources die with
// it, and only its own). Who opens a descriptor, who may use it and who
// closes it is stated once, in package iosys's doc; this is how the
// scheduler keeps that rule.
//
// The rule: a descriptor number is never freed while an operation that
// names it is queued or in flight on any worker's backend. An io_uring SQE
// names its descriptor by number until the kernel consumes it, and an
// epoll op retries its syscall by number at every edge: a number closed
// under a queued op and reused by an accept would let that op read or
// write another connection. So every operation that names a descriptor
// (SubmitIO) holds a reference on its FD from submission to its final
// completion, and a close asked for while references are held marks the
// FD closing (no new operation may name it), cancels the operations in
// flight, and leaves the close(2) to the completion that drops the last
// reference. Go's internal/poll fdMutex follows the same rule.
//
// Ownership is one record that moves: an FD has at most one owner task,
// and sits in that task's owned list (ioState.owned) until it is closed
// or passed on (PassFD), which take it out of the list. When the owner
// ends, every FD still in its list is closed. Nothing is left behind in
// a task that accepted a connection and handed it to a child, so a
// listener that runs for the life of a server holds no per-connection
// state.
//
// Lock order: FD.mu, then the owner's Task.mu.

// FD is a descriptor that tasks' I/O operations name. Make one with
// Control.NewFD, pass it with PassFD, close it with CloseFD or
// SubmitClose; every operation on it goes through SubmitIO with it.
type FD struct {
	num int

	mu sync.Mutex
	// owner is the task that owns the FD (closed when it ends), or nil.
	// Guarded by mu; the owner's ioState.owned lists the FD exactly when
	// owner is set.
	owner *Task
	// idx is the FD's index in owner's ioState.owned. Guarded by the
	// owner's Task.mu (a removal moves another FD into the gap).
	idx int
	// n counts operations submitted with this FD whose final completion
	// the owning worker has not yet reaped; guarded by mu. The number is
	// closed only at n == 0.
	n int
	// ops are the operations of n that their submitter has recorded
	// (known OpIDs), for the closer to cancel; guarded by mu.
	ops []fdOp
	// closing: a close was asked for; no new operation may name the
	// number. closed: the number was handed to close(2) or to a Close
	// operation (exactly once). Both guarded by mu, never cleared.
	closing, closed bool
	// detached: f was taken from its owner for a hand-over whose receiver
	// is not known yet (DetachFD: a message); owner is nil and f sits in
	// the scheduler's transit set until PassFD, ReturnFD or CloseFD ends
	// it. from is the task that detached it, whose record it holds (a
	// reference, as a heap object naming the task: ReturnFD can tell
	// whether that task still lives). Both guarded by mu; detached is
	// never set together with closing, and from is nil unless detached.
	detached bool
	from     *Task
	// passedTo is the id of the last task PassFD made the owner (0: none),
	// kept once f is closed: a stale copy's use names it. Guarded by mu.
	passedTo uint64
}

// fdOp names one operation in flight on an FD: the worker whose backend
// holds it and its id there.
type fdOp struct {
	w  *worker
	id evpoll.OpID
}

// ErrFDClosed is returned by SubmitIO for an FD that is being closed.
var ErrFDClosed = errors.New("descriptor is closed")

// Num returns the descriptor number.
func (f *FD) Num() int { return f.num }

// OwnedBy reports whether t owns f, and the id of f's owner (0: none).
// Only the owner may use a handle: a task that passed it on at spawn
// holds a stale copy.
func (f *FD) OwnedBy(t *Task) (owns bool, owner uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.owner == nil {
		return false, 0
	}
	return f.owner == t, f.owner.id
}

// PassedTo returns the id of the last task PassFD made f's owner (0:
// none), whether or not f has been closed since.
func (f *FD) PassedTo() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.passedTo
}

// Closing reports whether a close of f was asked for.
func (f *FD) Closing() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closing
}

// NewFD returns an FD for num owned by t (closed when t ends unless it is
// closed or passed on first); t nil makes an FD without owner.
func (c *Control) NewFD(t *Task, num int) *FD {
	f := &FD{num: num}
	if t != nil {
		f.mu.Lock()
		ok := f.ownLocked(t)
		f.mu.Unlock()
		if !ok {
			c.CloseFD(f) // t has ended: it would have closed f
		}
	}
	return f
}

// PassFD makes to the owner of f, taking f out of its old owner's list:
// the old owner's end no longer closes it. A closing f stays closing.
func (c *Control) PassFD(to *Task, f *FD) {
	f.mu.Lock()
	if f.closing {
		f.mu.Unlock()
		return
	}
	f.disownLocked()
	from := f.endTransitLocked()
	ok := f.ownLocked(to)
	f.passedTo = to.id
	f.mu.Unlock()
	c.s.transit.ended(f, from)
	if !ok {
		c.CloseFD(f)
	}
}

// CloseFD closes f: at once when no operation names it, else (after
// cancelling those operations) when the last of them completes. Repeated
// closes do nothing. Any goroutine.
func (c *Control) CloseFD(f *FD) { c.s.closeFDRef(f) }

func (s *Scheduler) closeFDRef(f *FD) {
	f.mu.Lock()
	from := f.endTransitLocked()
	now, cancel := f.startCloseLocked()
	f.mu.Unlock()
	s.transit.ended(f, from)
	s.endClose(f, now, cancel)
}

// endClose carries out what startCloseLocked decided, after f.mu is
// released: close the number now, or cancel the operations that name it.
func (s *Scheduler) endClose(f *FD, now bool, cancel []fdOp) {
	if now {
		s.closeFD(f.num)
	}
	cancelOps(cancel)
}

// SubmitClose closes f for the running task t through t's worker's
// backend (a Close operation: every backend forgets the number first).
// It returns true when t must suspend for that operation; false when the
// close is already done or left to the completion of the last operation
// on f, or f was closed before (close is idempotent). A Close that cannot
// be submitted (a limit, a full table) closes the number directly: a close
// never leaks the descriptor.
func (c *Control) SubmitClose(t *Task, f *FD, op *evpoll.Op) bool {
	f.mu.Lock()
	now, cancel := f.startCloseLocked() // (false, nil) when closed before
	f.mu.Unlock()
	cancelOps(cancel)
	if !now {
		return false
	}
	op.Kind, op.Fd = evpoll.Close, f.num
	if err := c.SubmitIO(t, op, nil); err != nil {
		c.s.closeFD(f.num)
		return false
	}
	return true
}

// startCloseLocked marks f closing and takes it from its owner. now is
// true when the caller must close the number (nothing names it); else
// the operations in cancel must be cancelled and the last completion
// closes it.
func (f *FD) startCloseLocked() (now bool, cancel []fdOp) {
	if f.closing {
		return false, nil
	}
	f.closing = true
	f.disownLocked()
	if f.n == 0 {
		f.closed = true
		return true, nil
	}
	return false, append([]fdOp(nil), f.ops...)
}

func cancelOps(ops []fdOp) {
	for _, o := range ops {
		if x := o.w.io.Load(); x != nil {
			x.b.Cancel(o.id) // ErrNotPending: it completed meanwhile
		}
	}
}

// acquire takes a reference for an operation about to name f; false when
// f is closing.
func (f *FD) acquire() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closing {
		return false
	}
	f.n++
	return true
}

// record notes the id of an operation submitted with a reference on f, for
// a closer to cancel; it cancels the operation itself when a close came
// between acquire and record.
func (f *FD) record(w *worker, id evpoll.OpID) {
	f.mu.Lock()
	closing := f.closing
	if !closing {
		f.ops = append(f.ops, fdOp{w, id})
	}
	f.mu.Unlock()
	if closing {
		cancelOps([]fdOp{{w, id}})
	}
}

// release drops the reference of an operation whose final completion was
// reaped (or that was never submitted: id 0); the last reference of a
// closing f closes its number.
func (s *Scheduler) releaseFD(f *FD, w *worker, id evpoll.OpID) {
	f.mu.Lock()
	f.n--
	for i, o := range f.ops {
		if o.w == w && o.id == id {
			last := len(f.ops) - 1
			f.ops[i] = f.ops[last]
			f.ops[last] = fdOp{}
			f.ops = f.ops[:last]
			break
		}
	}
	now := f.n == 0 && f.closing && !f.closed
	if now {
		f.closed = true
	}
	f.mu.Unlock()
	if now {
		s.closeFD(f.num)
	}
}

// ownLocked adds f to t's owned list (f.mu held, f without owner); false
// when t has ended already.
func (f *FD) ownLocked(t *Task) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return false
	}
	st := t.ioStateLocked()
	f.idx = len(st.owned)
	st.owned = append(st.owned, f)
	f.owner = t
	return true
}

// disownLocked takes f out of its owner's list (f.mu held).
func (f *FD) disownLocked() {
	o := f.owner
	if o == nil {
		return
	}
	f.owner = nil
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ended {
		return // its end took the list; it finds f.owner changed
	}
	st := o.io()
	last := len(st.owned) - 1
	g := st.owned[last]
	st.owned[f.idx], g.idx = g, f.idx
	st.owned[last] = nil
	st.owned = st.owned[:last]
}

// closeOwned closes the FDs of an ended task's owned list (taken under its
// mu when it was marked ended) that it still owns.
func (s *Scheduler) closeOwned(t *Task, owned []*FD) {
	for _, f := range owned {
		f.mu.Lock()
		var now bool
		var cancel []fdOp
		if f.owner == t {
			f.owner = nil // the list is gone: nothing to take it out of
			now, cancel = f.startCloseLocked()
		}
		f.mu.Unlock()
		s.endClose(f, now, cancel)
	}
}

// UseFD runs fn with f's number held open: a reference is taken for the
// call, as for an operation (so a close meanwhile leaves the close(2) to
// this call's end), for a synchronous syscall on the descriptor
// (shutdown, getsockname). ErrFDClosed when f is being closed.
func (c *Control) UseFD(f *FD, fn func(num int) error) error {
	if !f.acquire() {
		return ErrFDClosed
	}
	defer c.s.releaseFD(f, nil, 0)
	return fn(f.num)
}
