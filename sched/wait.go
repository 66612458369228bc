package sched

// The wait/wake protocol (spec §3.2: the scheduler knows only the identity
// of a wait, never what the event means).
//
// Every task has a wait word: generation<<2 | phase. The phases are
//
//	idle    the task is not waiting
//	armed   the task registered a wait (a Token is out) but still runs
//	parked  the task is Waiting in the scheduler
//	woken   a wake for the current generation arrived
//
// Only the worker running the task arms it (generation+1, phase armed) and
// parks it (armed → parked by CAS, after storing state Waiting). A waker
// holding a Token wins only a CAS from armed or parked *of the same
// generation* to woken:
//
//   - armed → woken: the task has not parked yet; the worker's park CAS
//     fails and it keeps the task runnable. A wake that races the
//     registration of a wait is therefore never lost.
//   - parked → woken: the waker moves the task Waiting → Runnable and
//     enqueues it. Exactly one waker can win, so a task is enqueued once.
//   - a Token of an older generation, or a second wake, finds another
//     generation or phase and is a no-op (a stale wake does nothing).
const (
	phIdle   = 0
	phArmed  = 1
	phParked = 2
	phWoken  = 3
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

// Valid reports whether the token names a task.
func (k Token) Valid() bool { return k.t != nil }

// armHost is arm for a wait that a completer outside the wait word ends
// with completeHost (a host intrinsic, an I/O operation): such a
// completer may hold the token after t has completed, so the record's
// reuse must exclude it (recycle).
func (t *Task) armHost() Token {
	t.hostWait = true
	return t.arm()
}

// arm starts a wait of t; only the worker running t calls it.
func (t *Task) arm() Token {
	gen := t.wait.Load()>>2 + 1
	t.wait.Store(gen<<2 | phArmed)
	return Token{t, gen}
}

// disarm ends a wait that completed without parking.
func (t *Task) disarm() {
	t.wait.Store(t.wait.Load()>>2<<2 | phIdle)
}

// park moves a Running task whose wait is armed to Waiting. It returns
// false when a wake already arrived: the task is then Runnable again and
// the caller must requeue it.
func (t *Task) park() bool {
	w := t.wait.Load()
	t.transition(Running, Waiting)
	if w&3 == phArmed && t.wait.CompareAndSwap(w, w>>2<<2|phParked) {
		return true
	}
	t.transition(Waiting, Runnable)
	return false
}

// wake performs the waker's side of the protocol; it returns whether this
// call woke the task, and whether the task must be enqueued by the caller.
func (k Token) wake() (woke, enqueue bool) {
	t := k.t
	for {
		w := t.wait.Load()
		if w>>2 != k.gen {
			return false, false
		}
		switch w & 3 {
		case phArmed:
			if t.wait.CompareAndSwap(w, k.gen<<2|phWoken) {
				return true, false
			}
		case phParked:
			if t.wait.CompareAndSwap(w, k.gen<<2|phWoken) {
				t.transition(Waiting, Runnable)
				return true, true
			}
		default:
			return false, false
		}
	}
}

// current returns a token for the task's current wait, if it has one.
func (t *Task) current() (Token, bool) {
	w := t.wait.Load()
	if ph := w & 3; ph == phArmed || ph == phParked {
		return Token{t, w >> 2}, true
	}
	return Token{}, false
}
