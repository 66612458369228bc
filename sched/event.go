package sched

import (
	"sync"
	"sync/atomic"
)

// Event is the generic wait/wake building block above which channels,
// mailboxes and actors are built (they are not part of the core, S-17).
// It is an auto-reset binary semaphore: a signal with no waiter is kept
// (once) and consumed by the next wait; a signal wakes one waiter;
// a broadcast wakes every waiter and keeps nothing.
type Event struct {
	mu        sync.Mutex
	signalled bool     // a kept signal; guarded by mu
	waiters   waitList // FIFO; entries may be stale (compacted); guarded by mu
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
	defer e.mu.Unlock()
	if e.signalled {
		e.signalled = false
		return true
	}
	e.waiters.push(tok)
	return false
}

// signal wakes the first live waiter, or keeps the signal. Stale entries
// (a waiter that was cancelled, timed out or already woken) are skipped,
// so a signal is never lost to them.
func (e *Event) signal(s *Scheduler, from *Task) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for {
		tok, ok := e.waiters.pop()
		if !ok {
			break
		}
		if s.wakeAs(from.worker(), tok, phSignalled) {
			return
		}
	}
	e.signalled = true
}

// broadcast wakes every live waiter; nothing is kept.
func (e *Event) broadcast(s *Scheduler, from *Task) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for {
		tok, ok := e.waiters.pop()
		if !ok {
			return
		}
		s.wake(from.worker(), tok)
	}
}
