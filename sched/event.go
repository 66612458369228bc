package sched

import (
	"sync/atomic"

	"github.com/jadevm/jade/internal/tinylock"
	"github.com/jadevm/jade/vmloop"
)

// Event is the generic wait/wake building block above which channels,
// mailboxes and actors are built (they are not part of the core, S-17).
// It is an auto-reset binary semaphore: a signal with no waiter is kept
// (once) and consumed by the next wait; a signal wakes one waiter;
// a broadcast wakes every waiter and keeps nothing.
type Event struct {
	// mu guards the kept signal and the waiters. A tinylock: its
	// sections are a few loads and stores and a wake (a select holds it
	// across its cases' registration), and its Unlock is a release store
	// where sync.Mutex's is a locked add (two locked instructions fewer a
	// wait and signal pair, BenchmarkPingPong). No hand-off runs through
	// it but to another holder.
	mu        tinylock.Mutex
	signalled bool                // a kept signal; guarded by mu
	waiters   waitListOf[evEntry] // FIFO; entries may be stale (compacted); guarded by mu
	// owner is the scheduler whose tasks may wait on the event and whose
	// workers wake them: set when the event is made (Control.NewEvent)
	// or, for one made by NewEvent, by the first Control.Owns that sees
	// it, and never changed afterwards. A waiter's token names a task of
	// owner only, so a wake never runs one scheduler's wake path on
	// another's task (the bus refuses a foreign event at every entry).
	owner atomic.Pointer[Scheduler]
}

// NewEvent returns an unsignalled event not yet bound to a scheduler: the
// first runtime it is handed to (a spawn argument, Signal) takes it, and
// every other refuses it. Control.NewEvent makes one already bound.
func NewEvent() *Event { return &Event{} }

// bind makes s the event's owner if it has none and reports whether s
// owns it.
func (e *Event) bind(s *Scheduler) bool {
	return e.owner.CompareAndSwap(nil, s) || e.owner.Load() == s
}

// wait registers tok; it returns true when a kept signal was consumed
// instead (the caller then disarms and does not park).
func (e *Event) wait(tok Token) bool {
	e.mu.Lock()
	if e.signalled {
		e.signalled = false
		e.mu.Unlock()
		return true
	}
	e.waiters.push(evEntry{tok: tok})
	e.mu.Unlock()
	return false
}

// evEntry is an event's waiter: a task's event wait, or a select's event
// case (tag non-zero, ParkLocked): its wake completes the select's host
// wait with i64 tag-1 instead of signalling it.
type evEntry struct {
	tok Token
	tag int64
}

func (e evEntry) live() bool { return e.tok.live() }

// signal wakes the first live waiter, or keeps the signal. Stale entries
// (a waiter that was cancelled, timed out or already woken) are skipped,
// so a signal is never lost to them.
func (e *Event) signal(s *Scheduler, from *Task) {
	e.mu.Lock()
	for {
		tok, ok := e.waiters.pop()
		if !ok {
			break
		}
		if s.wakeEntry(from.worker(), tok) {
			e.mu.Unlock()
			return
		}
	}
	e.signalled = true
	e.mu.Unlock()
}

// bcastChunk is the most waiters one step of a broadcast from a task wakes
// (the cost of a wake is in docs/PERFORMANCE.md): the rest are woken in the broadcaster's next
// dispatches, before it runs again (wakeMore).
const bcastChunk = 4096

// broadcast wakes every waiter registered now; nothing is kept. The list
// is taken whole (a later wait waits for the next signal, as it would
// after the broadcast). From a task, it wakes the first bcastChunk and
// leaves the rest on from (taskRare.bcast) and returns true: from must
// yield, and its next dispatches wake the rest, a chunk each, before it
// runs again, so no step wakes more than a chunk (S-6) and from goes on
// only once all are woken. From the host (from nil) it wakes them all.
func (e *Event) broadcast(s *Scheduler, from *Task) (more bool) {
	e.mu.Lock()
	toks := e.waiters.takeAll()
	e.mu.Unlock()
	w := from.worker()
	if w == nil {
		wakeAll(s, nil, toks)
		return false
	}
	n := min(len(toks), bcastChunk)
	wakeAll(s, w, toks[:n])
	if n == len(toks) {
		return false
	}
	from.mu.Lock()
	from.rareLocked().bcast = toks[n:]
	from.mu.Unlock()
	return true
}

// wakeAll wakes toks (stale ones are skipped by wake) and clears them.
func wakeAll(s *Scheduler, w *worker, toks []evEntry) {
	for i, tok := range toks {
		if tok.tag != 0 {
			s.wakeEntry(w, tok)
		} else {
			s.wake(w, tok.tok)
		}
		toks[i] = evEntry{}
	}
}

// wakeMore wakes the next chunk of the broadcast t left (r is t's rare
// part), all of it when t is cancelled (it will not run again), and
// reports whether some remain. Only t's worker touches r.bcast.
func (w *worker) wakeMore(t *Task, r *taskRare) bool {
	n := len(r.bcast)
	if !t.has(flagCancel) {
		n = min(n, bcastChunk)
	}
	wakeAll(w.s, w, r.bcast[:n])
	if r.bcast = r.bcast[n:]; len(r.bcast) == 0 {
		r.bcast = nil
		return false
	}
	return true
}

// bcastLeft returns t's rare part when t has a broadcast under way.
func (t *Task) bcastLeft() *taskRare {
	if r := t.rare.Load(); r != nil && r.bcast != nil {
		return r
	}
	return nil
}

// wakeEntry ends the wait of a waiter entry with the signal: a task's
// event wait is signalled; a select's event case (a tagged token) is
// completed with its tag, so the select learns which case fired. false:
// the wait had ended otherwise (the signal goes on to the next waiter).
func (s *Scheduler) wakeEntry(w *worker, e evEntry) bool {
	if e.tag != 0 {
		return s.completeHost(w, e.tok, vmloop.I64(e.tag-1), nil, nil, nil)
	}
	return s.wakeAs(w, e.tok, phSignalled)
}

// An event as one case of a select above the scheduler (the bus's
// sel.event): the select locks the event with its other cases, in one
// global order, takes a kept signal if there is one (TakeSignalLocked),
// else parks its host wait's token on the event with the result its wake
// must carry (ParkLocked). A signal that meets the parked case completes
// that wait (CompleteHost's one compare-and-swap decides it against the
// select's other cases); one that loses goes on to the next waiter, so a
// losing event keeps its signal.

// Lock locks the event for a select (see above).
func (e *Event) Lock() { e.mu.Lock() }

// Unlock unlocks what Lock locked.
func (e *Event) Unlock() { e.mu.Unlock() }

// TakeSignalLocked consumes a kept signal and reports whether there was
// one. The event is locked.
func (e *Event) TakeSignalLocked() bool {
	if e.signalled {
		e.signalled = false
		return true
	}
	return false
}

// ParkLocked registers tok, a host wait (Control.Suspend), as a waiter
// whose wake completes it with i64 result (≥ 0) rather than signalling
// it. The event is locked.
func (e *Event) ParkLocked(tok Token, result int64) {
	e.waiters.push(evEntry{tok: tok, tag: result + 1})
}
