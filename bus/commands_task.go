package bus

import (
	"strconv"

	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// The handlers of the task.*, event.* and io.print_* rows of the command
// table that read or change only the calling task or the event it names:
// one function per row.

// yield: task.yield.
func (b *Bus) yield(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	return completeVoid(ex, sched.ActYield)
}

// cancelled: task.cancelled, 1 once a cancel of the task was requested.
func (b *Bus) cancelled(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	v := int64(0)
	if t.CancelRequested() {
		v = 1
	}
	return complete(ex, vmloop.I64(v), sched.ActContinue)
}

// taskID: task.id.
func (b *Bus) taskID(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	return complete(ex, vmloop.I64(int64(t.ID())), sched.ActContinue)
}

// eventNew: event.new.
func (b *Bus) eventNew(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	return complete(ex, vmloop.Ext(vmloop.KindEvent, b.ctl.NewEvent()), sched.ActContinue)
}

// eventArg is argument 0 as an event.
func eventArg(ex *vmloop.Exec) (*sched.Event, sched.Action) {
	obj, err := ex.ArgObj(0, vmloop.KindEvent)
	if err != nil {
		return nil, trap(ex, err)
	}
	return obj.(*sched.Event), sched.ActContinue
}

// eventWait: event.wait ev.
func (b *Bus) eventWait(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	ev, a := eventArg(ex)
	if ev == nil {
		return a
	}
	if !b.ctl.EventWait(t, ev) {
		return sched.ActSuspend
	}
	return completeVoid(ex, sched.ActContinue)
}

// eventSignal: event.signal ev.
func (b *Bus) eventSignal(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	ev, a := eventArg(ex)
	if ev == nil {
		return a
	}
	b.ctl.EventSignal(t, ev)
	return completeVoid(ex, sched.ActContinue)
}

// eventBroadcast: event.broadcast ev.
func (b *Bus) eventBroadcast(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	ev, a := eventArg(ex)
	if ev == nil {
		return a
	}
	if b.ctl.EventBroadcast(t, ev) {
		// more waiters than one step wakes: the rest are woken in t's
		// next dispatches, before it runs again
		return completeVoid(ex, sched.ActYield)
	}
	return completeVoid(ex, sched.ActContinue)
}

// printI64: io.print_i64.
func (b *Bus) printI64(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	b.print(strconv.FormatInt(ex.ArgI64(0), 10) + "\n")
	return completeVoid(ex, sched.ActContinue)
}

// printF64: io.print_f64.
func (b *Bus) printF64(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	b.print(strconv.FormatFloat(ex.ArgF64(0), 'g', -1, 64) + "\n")
	return completeVoid(ex, sched.ActContinue)
}

// printStr: io.print_str.
func (b *Bus) printStr(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	s, a, ok := stringArg0(ex, req)
	if !ok {
		return a
	}
	b.print(s + "\n")
	return completeVoid(ex, sched.ActContinue)
}

// stringArg0 is argument 0 as a string: any other value traps (a handle
// error naming the intrinsic), as the verifier cannot always tell a
// string from a byte buffer.
func stringArg0(ex *vmloop.Exec, req *vmloop.Request) (string, sched.Action, bool) {
	v, err := ex.ArgValue(0)
	if err != nil {
		return "", trap(ex, err), false
	}
	if v.Kind() != vmloop.KindString {
		return "", trap(ex, vmloop.TrapInfo{Code: vmloop.TrapHandle, Msg: req.Intr.Name + ": argument is " + v.Kind().String() + ", want string"}), false
	}
	return v.String(), sched.ActContinue, true
}
