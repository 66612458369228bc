package sched

import "github.com/jadevm/jade/internal/relstore"

// The wait/wake protocol (spec §3.2: the scheduler knows only the identity
// of a wait, never what the event means).
//
// Every task has a wait word: generation<<phaseBits | phase. The phases are
//
//	idle    the task is not waiting
//	armed   the task registered a wait (a Token is out) but still runs
//	parked  the task is Waiting in the scheduler
//	woken     a wake for the current generation arrived
//	signalled an event's signal won the wake (a woken phase that says the
//	          signal must go to the next waiter if the task is cancelled
//	          before it resumes)
//	cancelled Cancel won the wake: nothing was delivered
//
// Only the worker running the task arms it (generation+1, phase armed) and
// parks it (armed → parked by CAS, after storing state Waiting). A waker
// holding a Token wins only a CAS from armed or parked *of the same
// generation* to a woken phase:
//
//   - armed → woken: the task has not parked yet; the worker's park CAS
//     fails and it keeps the task runnable. A wake that races the
//     registration of a wait is therefore never lost.
//   - parked → woken: the waker moves the task Waiting → Runnable and
//     enqueues it. Exactly one waker can win, so a task is enqueued once.
//   - a Token of an older generation, or a second wake, finds another
//     generation or phase and is a no-op (a stale wake does nothing).
//
// A wake that won carries a result (a host value or I/O result stored
// under the task's mutex before the wake, an event's signal, a joined
// task's outcome). The phase the winner wrote tells the worker that
// dispatches the task what it carried: when the task was cancelled after
// a completer won (phase woken or signalled), the worker does not just
// end it — the dispatcher's Abandon releases what was delivered (closes
// an accepted descriptor, passes a signal on to the next waiter), so a
// cancel never swallows a result. A wake won by Cancel itself (phase
// cancelled) delivered nothing.
const (
	phIdle      = 0
	phArmed     = 1
	phParked    = 2
	phWoken     = 3
	phSignalled = 4
	phCancelled = 5
	// phTimedOut: a timeout's timer won the wake (fireTimer). It carries
	// nothing, as phWoken; the worker that dispatches the task notes the
	// timeout from it (begin), so that the timer's worker, which may be a
	// peer firing a stalled worker's timers while the task still runs
	// there, writes nothing in the record.
	phTimedOut = 6

	phaseBits = 3
	phaseMask = 1<<phaseBits - 1
)

// Token identifies one wait of one task: the task and the generation of
// its wait word. It is a value; holding it keeps the task record alive.
type Token struct {
	t   *Task
	gen uint64
}

// Task returns the task the token wakes. Use it only while the wait is
// live: once that task has completed, its record may be reused by a later
// task (see Control.Prepare).
func (k Token) Task() *Task { return k.t }

// Live reports whether the token still names a wait that has not ended
// (a waiter list above the scheduler drops the tokens that are not).
func (k Token) Live() bool { return k.t != nil && k.live() }

// Valid reports whether the token names a task.
func (k Token) Valid() bool { return k.t != nil }

// armHost is arm for a wait that a completer outside the wait word ends
// with completeHost (a host intrinsic, an I/O operation): such a
// completer may hold the token after t has completed, so the record's
// reuse must exclude it (recycle).
func (t *Task) armHost() Token {
	t.rs |= rsHostWait
	return t.arm()
}

// arm starts a wait of t; only the worker running t calls it.
func (t *Task) arm() Token {
	gen := t.wait.Load()>>phaseBits + 1
	t.wait.Store(gen<<phaseBits | phArmed)
	return Token{t, gen}
}

// disarm ends a wait that completed without parking, and returns the
// phase it ended in (who won the wake: noteTimeout). No completer can win
// the word then: one won it already, or the wait's token never left the
// worker. Only Cancel, which takes its token from the word (current), may
// still win an armed word between the load and the store, and the store
// then overwrites its phase, as a locked store would too: the task runs
// on and meets the cancel flag at its next suspension point or slice
// end. So the idle phase needs no locked store: a waker that still sees
// the phase before it loses as it does on idle (relstore; two locked
// instructions fewer per ping-pong round trip, BenchmarkPingPong). arm
// keeps its locked store: it is one side of the armed / cancel pair
// (doc.go).
func (t *Task) disarm() uint64 {
	w := t.wait.Load()
	relstore.Uint64(&t.wait, w>>phaseBits<<phaseBits|phIdle)
	return w & phaseMask
}

// park moves a Running task whose wait is armed to Waiting. It returns
// false when a wake already arrived: the task is then Runnable again and
// the caller must requeue it.
func (t *Task) park() bool {
	w := t.wait.Load()
	t.transition(Running, Waiting)
	if w&phaseMask == phArmed && t.wait.CompareAndSwap(w, w>>phaseBits<<phaseBits|phParked) {
		return true
	}
	t.transition(Waiting, Runnable)
	return false
}

// wakeAs performs the waker's side of the protocol, writing phase ph
// (woken, signalled, cancelled or timed out); it returns whether this call
// woke the task, and whether the task must be enqueued by the caller.
func (k Token) wakeAs(ph uint64) (woke, enqueue bool) {
	t := k.t
	for {
		w := t.wait.Load()
		if w>>phaseBits != k.gen {
			return false, false
		}
		switch w & phaseMask {
		case phArmed:
			if t.wait.CompareAndSwap(w, k.gen<<phaseBits|ph) {
				return true, false
			}
		case phParked:
			if t.wait.CompareAndSwap(w, k.gen<<phaseBits|ph) {
				t.transition(Waiting, Runnable)
				return true, true
			}
		default:
			return false, false
		}
	}
}

// wokenBy returns the phase of t's wait word: which kind of waker ended
// its last wait (phWoken, phSignalled, phCancelled, phTimedOut), or
// phIdle/phArmed.
func (t *Task) wokenBy() uint64 { return t.wait.Load() & phaseMask }

// delivered reports whether phase ph ended a wait with a wake that may
// carry a result (everything but a cancel's): phWoken, phSignalled, and
// phTimedOut, which a dispatcher sees as a wake (it asks TimedOut).
func delivered(ph uint64) bool { return ph == phWoken || ph == phSignalled || ph == phTimedOut }

// current returns a token for the task's current wait, if it has one.
func (t *Task) current() (Token, bool) {
	w := t.wait.Load()
	if ph := w & phaseMask; ph == phArmed || ph == phParked {
		return Token{t, w >> phaseBits}, true
	}
	return Token{}, false
}
