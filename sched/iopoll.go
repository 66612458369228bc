package sched

import (
	"errors"
	"fmt"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/jtrace"
)

// Readiness polls: a wait on several things at once (a select above the
// scheduler) that includes a socket waits for the socket's readiness, not
// for an operation on it, so that the case that loses consumed nothing.
// Each such case is an evpoll.Poll submitted to the backend of the worker
// running the task, under the task's one armed host wait: its completion
// is a host completion of that wait, and the one compare-and-swap of the
// wait word decides it against the other cases, the timer and a cancel,
// as for any completer. The polls still in flight when the wait ends
// otherwise are cancelled when the task is next dispatched (dropTaskIO);
// their late completions find the wait stale and are dropped, giving back
// their FD references, as the completion of any abandoned operation does.

// pollOp names one readiness poll of a task's wait: the worker whose
// backend holds it and its id there.
type pollOp struct {
	w  *worker
	id evpoll.OpID
}

// SubmitPoll submits op (an evpoll.Poll of f) for t's current host wait,
// armed by Suspend and not yet parked, as one of the things that wait
// waits on: the poll's completion, whatever its result, completes the
// wait with the value val (CompleteHost's rule: the first completion of a
// wait wins; a later one is dropped). A wait may watch any number of
// polls. The polls that did not end the wait are cancelled when t is next
// dispatched. The backend only reads op, so the caller may submit the same
// op again while an earlier submission is in flight, but must not change
// it. The engine's inFlightIO limit applies (ErrLimit), and a closing f
// refuses the poll (ErrFDClosed), as in SubmitIO; on an error the wait
// stays armed. Only the worker running t.
func (c *Control) SubmitPoll(t *Task, op *evpoll.Op, f *FD, val int64) error {
	w := t.runner()
	x := w.io.Load()
	if x == nil {
		return fmt.Errorf("sched: io: worker %d: %w: %s", w.id, ErrNoIO, w.ioErr)
	}
	if t.rs&rsHostWait == 0 {
		panic("sched: SubmitPoll without a host wait")
	}
	tok, ok := t.current()
	if !ok {
		// The wait ended already (a completion raced its registration):
		// it needs no poll.
		return nil
	}
	e := t.engine
	lim := e.cfg.Load().Limits.InFlightIO
	if err := e.reserve(&e.ioOps, lim, "io", "operations in flight", "inFlightIO"); err != nil {
		return err
	}
	if !f.acquire() {
		e.ioOps.Add(-1)
		return fmt.Errorf("sched: io: %s: fd %d: %w", op.Kind, f.num, ErrFDClosed)
	}
	idx := x.recs.put(ioRec{t: t, gen: tok.gen, e: e, kind: op.Kind, fd: f, task: t.id, poll: true, val: val})
	id, err := x.b.Submit(op, evpoll.Token(idx))
	if err != nil {
		x.recs.take(idx)
		e.ioOps.Add(-1)
		w.s.releaseFD(f, w, 0)
		if errors.Is(err, evpoll.ErrTooMany) {
			return fmt.Errorf("sched: io: %s: %w: %w", op.Kind, ErrLimit, err)
		}
		return fmt.Errorf("sched: io: %s: %w", op.Kind, err)
	}
	x.recs.slots[idx].v.id = id
	f.record(w, id)
	x.n++
	st := t.ioState()
	st.polls = append(st.polls, pollOp{w, id})
	if w.tr != nil {
		w.traceTask(jtrace.KindIOSubmit, t, uint64(op.Kind))
	}
	return nil
}

// cancelPolls cancels the readiness polls of t's last wait (io is t's I/O
// state) on the workers holding them; a poll that completed (the one that
// ended the wait, or one whose completion is not reaped yet) answers
// ErrNotPending. Its completion still comes to its worker, which drops it.
func cancelPolls(io *ioState) {
	for i, p := range io.polls {
		if x := p.w.io.Load(); x != nil {
			x.b.Cancel(p.id)
		}
		io.polls[i] = pollOp{}
	}
	io.polls = io.polls[:0]
}
