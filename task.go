package jade

import (
	"context"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/errs"
	"github.com/jadevm/jade/sched"
)

// Task is a handle on a spawned task.
type Task struct {
	t  *sched.Task
	rt *Runtime
}

// ID returns the task id.
func (t *Task) ID() uint64 { return t.t.ID() }

// Name returns the task's name ("" when it has none).
func (t *Task) Name() string { return t.t.Name() }

// Wait waits for the task's outcome or the end of ctx.
func (t *Task) Wait(ctx context.Context) (Outcome, error) {
	o, err := bus.Await(ctx, t.t)
	return o, errs.Relabel("jade", "wait", err)
}

// Cancel requests cancellation (sticky).
func (t *Task) Cancel() error { return errs.Relabel("jade", "cancel", t.rt.def.Cancel(t.t)) }

// Done is closed when the task has completed.
func (t *Task) Done() <-chan struct{} { return t.t.Done() }

// Outcome returns the task's outcome once it has completed (ok false
// before).
func (t *Task) Outcome() (Outcome, bool) { return t.t.Outcome() }
