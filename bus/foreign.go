package bus

import (
	"errors"
	"fmt"

	"github.com/jadevm/jade/internal/chans"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// ErrForeign is wrapped by the error of a host call (a spawn's argument,
// a channel message sent by the host, Signal, Broadcast, Cancel) handed
// a task, an event, a channel or an I/O handle of another runtime, and of
// a spawn or UpdateConfig naming a Member of another bus. Each runtime
// wakes only its own tasks: an event of runtime 1 waited on by runtime
// 2's tasks would have runtime 1's workers wake them (sched/owner.go),
// and a channel would also carry runtime 1's tasks to runtime 2's. A host
// moves data between runtimes as values (numbers, strings, bytes, arrays
// of them), never these objects.
var ErrForeign = errors.New("it belongs to another runtime")

// foreign names the first task, event, channel or I/O handle in v that belongs to
// another runtime (in the words of an error text), or returns "" when v
// holds none. An event not yet bound to a runtime (sched.NewEvent) is
// bound to this one.
func (b *Bus) foreign(v vmloop.Value) string {
	switch v.Kind() {
	case vmloop.KindTask, vmloop.KindEvent, vmloop.KindExt, vmloop.KindArrayRef, vmloop.KindMap:
	default:
		return "" // a number, string, bytes or number array: nothing to own
	}
	what := ""
	v.EachObject(func(k vmloop.Kind, obj any) bool {
		if b.owns(obj) {
			return true
		}
		what = "a " + k.String()
		if k == vmloop.KindEvent || k == vmloop.KindExt {
			what = "an " + k.String()
		}
		if h, ok := obj.(*ioHandle); ok {
			what = "an I/O handle (" + h.kind + ")"
		}
		if _, ok := obj.(*chans.Chan); ok {
			what = "a channel"
		}
		return false
	})
	return what
}

// owns reports whether obj, a runtime object of a value, may be used by
// this bus's tasks.
func (b *Bus) owns(obj any) bool {
	if h, ok := obj.(*ioHandle); ok {
		return b.ctl.Owns(h.fd)
	}
	if c, ok := obj.(*chans.Chan); ok {
		// Its messages carry tasks and events from one runtime's tasks
		// to another's, and its senders wake its receivers.
		return c.Owner() == nil || c.Owner() == b
	}
	return b.ctl.Owns(obj)
}

// checkArgs refuses values that hold another runtime's objects; op names
// the host call in the error.
func (b *Bus) checkArgs(op string, args []vmloop.Value) error {
	for i, a := range args {
		if what := b.foreign(a); what != "" {
			return fmt.Errorf("bus: %s: argument %d holds %s of another runtime: %w", op, i, what, ErrForeign)
		}
	}
	return nil
}

// foreignTrap is the trap of a task whose host intrinsic (name) returned
// another runtime's object in its result: a fault of the host, which the
// task cannot catch or repair.
func foreignTrap(name, what string) vmloop.TrapInfo {
	return vmloop.TrapInfo{Code: vmloop.TrapIntrinsic, Msg: fmt.Sprintf("%s: the result holds %s of another runtime (%v)", name, what, ErrForeign)}
}

// ownedTask refuses a task of another runtime (Cancel).
func (b *Bus) ownedTask(op string, t *sched.Task) error {
	if !b.ctl.Owns(t) {
		return fmt.Errorf("bus: %s: task %d: %w", op, t.ID(), ErrForeign)
	}
	return nil
}
