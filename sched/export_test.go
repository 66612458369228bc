package sched

import "github.com/jadevm/jade/vmloop"

// SetTraceHook installs a transition observer for tests.
func SetTraceHook(f func(id uint64, from, to State)) { traceHook = f }

// NewTestTask makes a bare task record for state-machine tests.
func NewTestTask(st State) *Task {
	t := &Task{id: 1}
	t.flags.Or(flagPinned) // never put in the real taskPool
	t.state.Store(uint32(st))
	return t
}

// Transition exposes transition for tests.
func (t *Task) Transition(from, to State) { t.transition(from, to) }

// TaskRecordsMade returns how many task records Prepare has allocated
// (the rest came from taskPool).
func TaskRecordsMade() uint64 { return tasksMade.Load() }

// Draining reports whether completions currently look for the last task
// (a Drain waits).
func (s *Scheduler) Draining() bool { return s.draining.Load() }

// ParkYields returns how many of worker i's hand-overs to Go's scheduler
// were made on its way into a park.
func (s *Scheduler) ParkYields(i int) uint64 { return s.workers[i].parkYields.Load() }

// EventWaiters returns how many tokens ev's waiter list holds (live or
// stale).
func EventWaiters(ev *Event) int {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	return ev.waiters.len()
}

// Joiners returns how many tokens t's joiner list holds beyond the first
// slot (live or stale).
func Joiners(t *Task) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.rare.Load(); r != nil {
		return r.joiners.len()
	}
	return 0
}

// ExecOf returns t's execution state (for tests outside the package; the
// bus gets it through Control.Exec).
func ExecOf(t *Task) *vmloop.Exec { return t.exec }
