package bus

import (
	"errors"
	"fmt"

	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// dispatcher is the bus seen by the scheduler: every intrinsic request of
// every task arrives here (sched.Dispatcher).
type dispatcher Bus

var _ sched.Dispatcher = (*dispatcher)(nil)

// Intrinsic handles a request of task t running on a worker: a host
// intrinsic after the capability its registration names, a central one
// through its row of the command table (commands.go).
func (d *dispatcher) Intrinsic(t *sched.Task, req *vmloop.Request) sched.Action {
	b := (*Bus)(d)
	ex := b.ctl.Exec(t)
	if req.Intr.ID >= vmloop.HostIntrinsicBase {
		return b.callHost(t, ex, req)
	}
	return b.dispatch(t, ex, req)
}

func (b *Bus) join(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	target, a := taskArg(ex, 0)
	if target == nil {
		return a
	}
	return b.joinTask(t, ex, req, target)
}

// joinTask is join with its argument resolved.
func (b *Bus) joinTask(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request, target *sched.Task) sched.Action {
	if !b.ctl.AwaitTask(t, target) {
		return sched.ActSuspend
	}
	return b.completeJoin(ex, req, target)
}

func (b *Bus) joinResume(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	target, a := taskArg(ex, 0)
	if target == nil {
		return a
	}
	if b.ctl.TimedOut(t) {
		return timedOut(ex, req, fmt.Sprintf("task %d", target.ID()))
	}
	if target.State() != sched.Completed {
		// Woken without completion (cannot happen: only completion
		// wakes joiners); wait again rather than misreport.
		if !b.ctl.AwaitTask(t, target) {
			return sched.ActSuspend
		}
	}
	return b.completeJoin(ex, req, target)
}

// cancel: the handle is the grant within the engine; a task of another
// engine needs CapCancelOther as well.
func (b *Bus) cancel(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	target, a := taskArg(ex, 0)
	if target == nil {
		return a
	}
	if target.Engine() != t.Engine() {
		what := fmt.Sprintf("task.cancel of task %d of engine %q", target.ID(), target.Engine().Name())
		if a, ok := b.authorize(t, ex, what, CapCancelOther); !ok {
			return a
		}
	}
	b.ctl.Cancel(t, target)
	return completeVoid(ex, sched.ActContinue)
}

func (b *Bus) eventResume(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	if b.ctl.TimedOut(t) {
		return timedOut(ex, req, "the event")
	}
	return completeVoid(ex, sched.ActContinue)
}

// Abandon releases what a won wake delivered to a task that was cancelled
// before it resumed (sched.Dispatcher): by the abandon of req's command
// row, for a central intrinsic whose wait carries a resource. Joins,
// outcome, sleeps and ticks carry nothing that outlives the task: their
// rows have none.
func (d *dispatcher) Abandon(t *sched.Task, req *vmloop.Request, signalled bool) {
	b := (*Bus)(d)
	if req.Intr.ID >= vmloop.HostIntrinsicBase {
		b.ctl.DropHostResult(t) // runs the host's release hook, if any
		return
	}
	if c := commandOf(req.Intr.ID); c != nil && c.abandon != nil {
		c.abandon(b, t, req, signalled)
	}
}

// eventAbandon: the signal was meant for a waiter that will not run: the
// next one gets it (or the event keeps it).
func (b *Bus) eventAbandon(t *sched.Task, _ *vmloop.Request, signalled bool) {
	if obj, err := b.ctl.Exec(t).ArgObj(0, vmloop.KindEvent); err == nil && signalled {
		b.ctl.EventSignal(t, obj.(*sched.Event))
	}
}

// chanAbandon: a message handed over goes back to its channel's head
// (the release of taskWaiter.Wake); a sender's "sent" is just dropped.
func (b *Bus) chanAbandon(t *sched.Task, _ *vmloop.Request, _ bool) {
	b.ctl.DropHostResult(t)
}

// selWaitAbandon releases what a select's won case delivered.
func (b *Bus) selWaitAbandon(t *sched.Task, _ *vmloop.Request, _ bool) { b.selAbandon(t) }

// Resume completes the request of a task woken after ActSuspend.
func (d *dispatcher) Resume(t *sched.Task, req *vmloop.Request) sched.Action {
	b := (*Bus)(d)
	ex := b.ctl.Exec(t)
	if req.Intr.ID < vmloop.HostIntrinsicBase {
		return b.resumeCommand(t, ex, req)
	}
	if b.ctl.TimedOut(t) { // only a blocking call arms a timeout (blocking.go)
		b.cancelTimedOut(t.ID())
		return timedOut(ex, req, "the blocking host call")
	}
	v, thrown, tr, ok := b.ctl.TakeHostResult(t)
	switch {
	case !ok:
		return trap(ex, vmloop.TrapInfo{Code: vmloop.TrapIntrinsic, Msg: req.Intr.Name + ": resumed without a result"})
	case tr != nil:
		return trap(ex, *tr)
	case thrown != nil:
		return raise(ex, *thrown)
	default:
		return complete(ex, v, sched.ActContinue)
	}
}

// spawnFromTask: its row names CapSpawn (a spawn into the task's own
// engine; bytecode cannot name another).
func (b *Bus) spawnFromTask(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	// The child starts with the request's arguments copied straight from
	// t's registers (references exported and imported: no Values for
	// scalars).
	child, err := b.ctl.PrepareSpawn(t)
	if err == sched.ErrSpawnMore {
		return sched.ActMore // its arguments are copied in steps
	}
	if err != nil {
		var ti vmloop.TrapInfo
		if errors.As(err, &ti) {
			return trap(ex, ti) // an argument t could not hand over (a stale handle)
		}
		return spawnErr(ex, err)
	}
	// Socket and file handles among the arguments now belong to the
	// child, before it can run: see Prepare.
	for i, pt := range ex.Program().Funcs[req.Func].Params {
		if pt != vmloop.TRef {
			continue
		}
		if obj, ok := ex.ArgExt(i); ok {
			b.passHandle(child, obj)
		}
	}
	// The reference goes into t's heap before the child can run and end:
	// it keeps the child's record from reuse (sched.Control.PrepareSpawn
	// counted it).
	a := sched.ActContinue
	if err := ex.CompleteTask(child); err != nil {
		a = trap(ex, err)
	}
	b.ctl.Launch(t, child)
	return a
}

// spawnErr throws a failed spawn in the spawner: an engine limit (or
// arguments the child's heap or the engine's budget cannot take) as a
// ResourceError, anything else as an Error.
func spawnErr(ex *vmloop.Exec, err error) sched.Action {
	if errors.Is(err, sched.ErrLimit) || errors.Is(err, vmloop.ErrHeapLimit) {
		return raise(ex, vmloop.Err(vmloop.ErrKindResource, err.Error()))
	}
	return raise(ex, vmloop.Err(vmloop.ErrKindError, err.Error()))
}

// completeJoin delivers target's outcome to a join or outcome request:
// Success gives the value (its kind checked against the destination; a
// value the joiner's heap cannot take is thrown as a ResourceError);
// Failure is re-thrown in the joiner (S-12); Trap and Cancelled are thrown
// as TaskError, so a join never makes the joiner trap or be cancelled.
// OUTCOME only reports the kind. A value of more than a step is imported
// in steps (ActMore): the join is dispatched again, finds target
// completed and goes on with the import (vmloop.Exec.CompleteIfRoomMore).
func (b *Bus) completeJoin(ex *vmloop.Exec, req *vmloop.Request, target *sched.Task) sched.Action {
	if k, bits, ok := target.InlineOutcome(); ok {
		// A void, i64 or f64 result, the common case: without copying an
		// Outcome (BenchmarkSpawnJoin).
		switch req.Intr.ID {
		case vmloop.IntrOutcome:
			return complete(ex, vmloop.I64(int64(sched.Success)), sched.ActContinue)
		case vmloop.IntrJoinVoid:
			return completeVoid(ex, sched.ActContinue)
		}
		if err := ex.CompleteScalar(k, bits); err != nil {
			return trap(ex, err)
		}
		return sched.ActContinue
	}
	o, _ := target.Outcome()
	if req.Intr.ID == vmloop.IntrOutcome {
		return complete(ex, vmloop.I64(int64(o.Kind)), sched.ActContinue)
	}
	switch o.Kind {
	case sched.Success:
		if req.Intr.ID == vmloop.IntrJoinVoid {
			return completeVoid(ex, sched.ActContinue)
		}
		more, room, err := ex.CompleteIfRoomMore(o.Value)
		if more {
			return sched.ActMore // a large result is imported in steps
		}
		if !room {
			var ti vmloop.TrapInfo
			errors.As(err, &ti)
			return raise(ex, vmloop.Err(vmloop.ErrKindResource, fmt.Sprintf("%s: the result of task %d does not fit this task's heap: %s", req.Intr.Name, target.ID(), ti.Msg)))
		}
		if err != nil {
			return trap(ex, err)
		}
		return sched.ActContinue
	case sched.Failure:
		return raise(ex, o.Value)
	case sched.Trapped:
		return raise(ex, vmloop.Err(vmloop.ErrKindTask, fmt.Sprintf("%s trapped: %s", taskLabel(target), o.Trap.Error())))
	default:
		return raise(ex, vmloop.Err(vmloop.ErrKindTask, fmt.Sprintf("%s was cancelled", taskLabel(target))))
	}
}

func taskArg(ex *vmloop.Exec, i int) (*sched.Task, sched.Action) {
	obj, err := ex.ArgObj(i, vmloop.KindTask)
	if err != nil {
		return nil, trap(ex, err)
	}
	return obj.(*sched.Task), sched.ActContinue
}

func complete(ex *vmloop.Exec, v vmloop.Value, ok sched.Action) sched.Action {
	if err := ex.Complete(v); err != nil {
		return trap(ex, err)
	}
	return ok
}

// completeVoid is complete with Void (vmloop.Exec.CompleteVoid).
func completeVoid(ex *vmloop.Exec, ok sched.Action) sched.Action {
	if err := ex.CompleteVoid(); err != nil {
		return trap(ex, err)
	}
	return ok
}

func raise(ex *vmloop.Exec, err vmloop.Value) sched.Action {
	if ex.Raise(err) {
		return sched.ActContinue
	}
	if ex.Trap().Code != vmloop.TrapNone {
		return sched.ActTrapped // the request could not throw: Raise trapped
	}
	return sched.ActThrown
}

func trap(ex *vmloop.Exec, err error) sched.Action {
	ex.SetTrapErr(err)
	return sched.ActTrapped
}
