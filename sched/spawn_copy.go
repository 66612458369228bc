package sched

import (
	"errors"

	"github.com/jadevm/jade/internal/jtrace"
)

// Requests done in bounded steps (ActMore): a spawn whose reference
// arguments take more than one step to copy (vmloop.Exec.BeginSpawn,
// SpawnMore), a join whose result does (vmloop.Exec.
// CompleteIfRoomMore; the join's first dispatch, or its Resume), and a
// channel's send or receive whose message does (the dispatcher's). The
// scheduler knows nothing of what the steps are. The task
// stays stopped at its request while the dispatcher answers ActMore, and
// the worker dispatches the request again (Dispatcher.Intrinsic, also
// after a Resume) while the slice's budget lasts, then at the start of
// the task's next slices, before it runs again. Between steps
// the spawner is an ordinary runnable task: other tasks run, it can be
// stolen, and a cancel ends it (finish drops the child's Exec with what
// its heap took of the engine's budget; the child was never a task; a
// joiner's Exec is recycled with what the import made in its heap).

// ErrSpawnMore is returned by PrepareSpawn while the copy of the spawn's
// arguments has more steps to do: the dispatcher answers ActMore and is
// asked again with the same request.
var ErrSpawnMore = errors.New("sched: spawn: arguments still being copied")

// takeSpawn takes t's spawn under way (the child's record, not yet a
// task: its Exec's heap holds the arguments copied so far, its id is
// set), or nil (t nil: a host spawn).
func (t *Task) takeSpawn() *Task {
	if t == nil {
		return nil
	}
	r := t.rare.Load()
	if r == nil || r.spawn == nil {
		return nil
	}
	c := r.spawn
	r.spawn = nil
	return c
}

// keepSpawn keeps the child of t's spawn until its next step.
func (t *Task) keepSpawn(c *Task) {
	t.mu.Lock()
	t.rareLocked().spawn = c
	t.mu.Unlock()
}

// dropSpawn gives up t's spawn under way (t ends before its copy did).
func (w *worker) dropSpawn(t *Task) {
	if c := t.takeSpawn(); c != nil {
		c.x.Recycle() // gives back what its heap took
		c.recycle(w)  // never visible: nothing else names it
	}
}

// more dispatches t's request again while the dispatcher answers ActMore
// and the slice's budget lasts, and returns its final action; false: the
// budget ran out (or t was cancelled) and t's slice ended, the request to
// be dispatched again at t's next slice (slice).
func (w *worker) more(t *Task, a Action, budget *int64) (Action, bool) {
	ex := t.ex()
	for a == ActMore {
		if *budget <= 0 || t.has(flagCancel) {
			t.mu.Lock()
			t.rareLocked().again = true
			t.mu.Unlock()
			w.endSlice(t, jtrace.EndPreempted)
			return a, false
		}
		a = w.s.disp.Intrinsic(t, ex.Request())
		w.chargeCopies(ex, budget)
	}
	return a, true
}
