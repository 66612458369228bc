package bus

import (
	"fmt"

	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// The table of bytecode commands: one row per central intrinsic, naming
// the capability it needs, its handler and, for one that suspends, what
// resumes it. Every request from bytecode passes one check (authorize)
// before its handler runs, so a new intrinsic gets the check by getting a
// row, and TestCommandTable fails for an intrinsic without one or a
// mutating row that names no grant.

// grant says what entitles a task to a command.
type grant uint8

const (
	// grantCap: the capability in need (checked by authorize before the
	// handler runs).
	grantCap grant = iota + 1
	// grantSelf: the command reads or changes only the calling task's own
	// state (its clock, its next wait's timeout, its own yield).
	grantSelf
	// grantHandle: the argument handle is the grant (object capability):
	// only a task holding the event, task or job value can name it, and
	// handles cross engines only through spawn arguments and results.
	grantHandle
)

// command is one row of the table.
type command struct {
	grant grant
	need  Capability // with grantCap
	// mutates: the command changes scheduler state beyond the calling
	// task's own (another task's, the engine's, the outside world's).
	mutates bool
	// timed: the command is a wait that time.timeout bounds (a join,
	// outcome, evwait, or a socket or file operation that may wait). Its
	// handler runs under timedWait, which takes the one-shot timeout
	// first and arms it if the handler suspended, else drops it: a fast
	// path of the handler cannot leave it for a later wait.
	timed  bool
	handle func(b *Bus, t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action
	// resume completes the request after ActSuspend; nil for a command
	// that never suspends.
	resume func(b *Bus, t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action
	// abandon releases what a won wake delivered to a task cancelled
	// before it resumed (a signal, a message, a select's case, a
	// descriptor); nil for a wait that carries nothing.
	abandon func(b *Bus, t *sched.Task, req *vmloop.Request, signalled bool)
	// io is the I/O part of a net.* or file.* row (io_table.go): its
	// backend operation, argument handle, start, completion, failure and
	// abandon; nil for every other row.
	io *ioOp
}

// commands is indexed by central intrinsic ID (a slice, not a map: one
// lookup per intrinsic call); built once at init.
var commands []*command

// commandOf returns id's row, or nil.
func commandOf(id vmloop.IntrinsicID) *command {
	if int(id) < len(commands) {
		return commands[id]
	}
	return nil
}

func init() {
	row := func(c command, ids ...vmloop.IntrinsicID) {
		for _, id := range ids {
			c := c
			for int(id) >= len(commands) {
				commands = append(commands, nil)
			}
			commands[id] = &c
		}
	}
	row(command{grant: grantCap, need: CapSpawn, mutates: true, handle: (*Bus).spawnFromTask}, vmloop.IntrSpawn)
	row(command{grant: grantHandle, timed: true, handle: (*Bus).join, resume: (*Bus).joinResume},
		vmloop.IntrJoinI64, vmloop.IntrJoinF64, vmloop.IntrJoinRef, vmloop.IntrJoinVoid, vmloop.IntrOutcome)
	row(command{grant: grantSelf, handle: (*Bus).selfCommand},
		vmloop.IntrYield, vmloop.IntrCancelled, vmloop.IntrTaskID)
	row(command{grant: grantSelf, handle: (*Bus).setTaskName}, vmloop.IntrTaskSetName)
	// Cancelling a task of another engine needs CapCancelOther on top of
	// the handle (checked in cancel through authorizeCap).
	row(command{grant: grantHandle, mutates: true, handle: (*Bus).cancel}, vmloop.IntrCancel)
	row(command{grant: grantSelf, handle: (*Bus).selfCommand}, vmloop.IntrEventNew)
	row(command{grant: grantHandle, mutates: true, timed: true, handle: (*Bus).event, resume: (*Bus).eventResume, abandon: (*Bus).eventAbandon}, vmloop.IntrEventWait)
	row(command{grant: grantHandle, mutates: true, handle: (*Bus).event}, vmloop.IntrEventSignal, vmloop.IntrEventBroadcast)
	row(command{grant: grantSelf, handle: (*Bus).printCommand}, vmloop.IntrPrintI64, vmloop.IntrPrintF64, vmloop.IntrPrintStr)
	// time.* use the engine's own timer wheel for the calling task;
	// periodic jobs are engine-local timers the task owns.
	row(command{grant: grantSelf, handle: (*Bus).timeCommand, resume: (*Bus).timeCommandResume},
		vmloop.IntrTimeNow, vmloop.IntrTimeSleep, vmloop.IntrTimeSleepUntil, vmloop.IntrTimeTimeout, vmloop.IntrTimePeriodic)
	row(command{grant: grantHandle, handle: (*Bus).timeCommand, resume: (*Bus).timeCommandResume},
		vmloop.IntrTimeTick, vmloop.IntrTimeJobMetric, vmloop.IntrTimeJobStats)
	// net.* and file.*: their rows are in io_table.go (ioRows), each
	// with its I/O part.
	for id, op := range ioRows {
		row(ioCommandRow(op), id)
	}
	// chan.*: making a channel touches nothing shared; every other
	// operation is granted by the channel handle (only a task given the
	// handle can name the channel), and a send or receive wakes tasks of
	// whatever engine waits on it.
	row(command{grant: grantSelf, handle: (*Bus).chanNew},
		vmloop.IntrChanNewI64, vmloop.IntrChanNewF64, vmloop.IntrChanNewRef)
	row(command{grant: grantHandle, mutates: true, timed: true, handle: (*Bus).chanSend, resume: (*Bus).chanSendResume, abandon: (*Bus).chanAbandon},
		vmloop.IntrChanSendI64, vmloop.IntrChanSendF64, vmloop.IntrChanSendRef)
	row(command{grant: grantHandle, mutates: true, handle: (*Bus).chanSend},
		vmloop.IntrChanTrySendI64, vmloop.IntrChanTrySendF64, vmloop.IntrChanTrySendRef)
	row(command{grant: grantHandle, mutates: true, timed: true, handle: (*Bus).chanRecv, resume: (*Bus).chanRecvResume, abandon: (*Bus).chanAbandon},
		vmloop.IntrChanRecvI64, vmloop.IntrChanRecvF64, vmloop.IntrChanRecvRef)
	row(command{grant: grantHandle, mutates: true, handle: (*Bus).chanRecv}, vmloop.IntrChanTryRecv)
	row(command{grant: grantHandle, mutates: true, handle: (*Bus).chanClose}, vmloop.IntrChanClose)
	row(command{grant: grantHandle, handle: (*Bus).chanInfo}, vmloop.IntrChanLen, vmloop.IntrChanCap)
	// The drain channel is the runtime's, open to every task: it only
	// closes, and nothing can be sent on it or close it.
	row(command{grant: grantSelf, handle: (*Bus).chanDrain}, vmloop.IntrChanDrain)
	// sel.*: a select belongs to the task that made it (selArg checks);
	// its cases are granted by the channel handles they name. sel.wait
	// is not a timed row: it takes time.timeout itself, through
	// timedWaitOwn, beside its own deadline operand.
	row(command{grant: grantSelf, handle: (*Bus).selNew}, vmloop.IntrSelNew)
	row(command{grant: grantHandle, handle: (*Bus).selAdd},
		vmloop.IntrSelRecv, vmloop.IntrSelEvent, vmloop.IntrSelSendI64, vmloop.IntrSelSendF64, vmloop.IntrSelSendRef)
	row(command{grant: grantHandle, handle: (*Bus).selSet},
		vmloop.IntrSelSetI64, vmloop.IntrSelSetF64, vmloop.IntrSelSetRef)
	row(command{grant: grantHandle, mutates: true, handle: (*Bus).selWait, resume: (*Bus).selWaitResume, abandon: (*Bus).selWaitAbandon}, vmloop.IntrSelWait)
	row(command{grant: grantHandle, handle: (*Bus).selValue},
		vmloop.IntrSelValueI64, vmloop.IntrSelValueF64, vmloop.IntrSelValueRef)
	row(command{grant: grantHandle, handle: (*Bus).selClosed}, vmloop.IntrSelClosed)
	// A socket's case names a handle only its owner may use (selAddIO
	// checks), under the engine's io capability as every socket use.
	row(command{grant: grantCap, need: CapIO, handle: (*Bus).selAddIO}, vmloop.IntrSelReadable, vmloop.IntrSelAcceptable)
	row(command{grant: grantHandle, handle: (*Bus).selAddJoin}, vmloop.IntrSelJoin)
}

// authorize checks the calling engine's grant for a command of capability
// need, the one capability check of every bytecode request (host
// intrinsics pass need from their registration). ok false: the action
// throws the CapabilityError.
func (b *Bus) authorize(t *sched.Task, ex *vmloop.Exec, name string, need Capability) (sched.Action, bool) {
	m := b.member(t.Engine())
	if m.has(need) {
		return 0, true
	}
	var have Capability
	if m != nil {
		have = m.caps
	}
	return raise(ex, vmloop.Err(vmloop.ErrKindCapability, fmt.Sprintf("%s: engine %q lacks capability %s", name, t.Engine().Name(), need&^have))), false
}

// has reports whether m (nil: an engine the bus does not know) holds
// every grant of need: the predicate of both authorize (bytecode) and
// Member.require (host commands).
func (m *Member) has(need Capability) bool { return m != nil && m.caps&need == need }

// dispatch runs the handler of req's row after the check.
func (b *Bus) dispatch(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	c := commandOf(req.Intr.ID)
	if c == nil {
		return trap(ex, vmloop.TrapInfo{Code: vmloop.TrapIntrinsic, Msg: "no handler for intrinsic " + req.Intr.Name})
	}
	if c.grant == grantCap {
		if a, ok := b.authorize(t, ex, req.Intr.Name, c.need); !ok {
			return a
		}
	}
	if c.timed {
		return b.timedWait(t, ex, req, c.handle)
	}
	return c.handle(b, t, ex, req)
}

// resumeCommand runs the resume of req's row.
func (b *Bus) resumeCommand(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	if c := commandOf(req.Intr.ID); c != nil && c.resume != nil {
		return c.resume(b, t, ex, req)
	}
	return trap(ex, vmloop.TrapInfo{Code: vmloop.TrapIntrinsic, Msg: "unexpected resume of " + req.Intr.Name})
}

// timeCommand and timeCommandResume give time.*, one handler for several
// IDs, the row's signature.
func (b *Bus) timeCommand(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	a, _ := b.timeIntrinsic(t, ex, req)
	return a
}

func (b *Bus) timeCommandResume(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	if a, ok := b.timeResume(t, ex, req); ok {
		return a
	}
	return trap(ex, vmloop.TrapInfo{Code: vmloop.TrapIntrinsic, Msg: "unexpected resume of " + req.Intr.Name})
}
