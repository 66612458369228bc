package sched

import "sync"

// Event is the generic wait/wake building block above which channels,
// mailboxes and actors are built (they are not part of the core, S-17).
// It is an auto-reset binary semaphore: a signal with no waiter is kept
// (once) and consumed by the next wait; a signal wakes one waiter;
// a broadcast wakes every waiter and keeps nothing.
type Event struct {
	mu        sync.Mutex
	signalled bool     // a kept signal; guarded by mu
	waiters   waitList // FIFO; entries may be stale (compacted); guarded by mu
}

// NewEvent returns an unsignalled event.
func NewEvent() *Event { return &Event{} }

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
