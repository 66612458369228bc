package bus

import (
	"fmt"

	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// The table of bytecode commands: one row per central intrinsic, naming
// what grants it (the capability it needs, the calling task itself, or
// the handle it names), its handler and, for one that suspends, what
// resumes it, what releases what its wait carried, and how a stalled
// task's report describes the wait. Every request from bytecode passes
// one check (authorize) before its handler runs, and the dispatcher, the
// resume, the abandon and DescribeWait read the row and switch on no ID:
// a new intrinsic is its row in vmloop's table (ID, name, types, since),
// its row here, or in io_table.go for net.* and file.*, and its handler.
// TestCommandTable fails for an intrinsic without a row or a mutating
// row that names no grant.

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
	timed bool
	// first: a join, whose target, when it waits to run next on the
	// joiner's worker, runs first (runFirst) unless a timeout bounds the
	// wait. Its handle must be join: dispatch goes on with joinTask and
	// the target runFirst resolved.
	first  bool
	handle func(b *Bus, t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action
	// resume completes the request after ActSuspend; nil for a command
	// that never suspends.
	resume func(b *Bus, t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action
	// abandon releases what a won wake delivered to a task cancelled
	// before it resumed (a signal, a message, a select's case, a
	// descriptor); nil for a wait that carries nothing.
	abandon func(b *Bus, t *sched.Task, req *vmloop.Request, signalled bool)
	// wait is the kind of wait a task suspended in the command is
	// reported as (sched.Wait.Kind; "" for sched.WaitOther), and
	// describe, if not nil, fills in what it waits for (with ex: the
	// world stopped, the request pending; it only reads).
	wait     string
	describe func(b *Bus, w *sched.Wait, ex *vmloop.Exec)
	// io is the I/O part of a net.* or file.* row (io_table.go): its
	// backend operation, argument handle, start, completion, failure and
	// abandon; nil for every other row.
	io *ioOp
}

// commandRows are the rows of every central intrinsic but net.* and
// file.* (ioRows) and the map.* family, which runs in the VM loop.
var commandRows = map[vmloop.IntrinsicID]command{
	// task.*
	vmloop.IntrSpawn:    {grant: grantCap, need: CapSpawn, mutates: true, handle: (*Bus).spawnFromTask},
	vmloop.IntrJoinI64:  joinRow,
	vmloop.IntrJoinF64:  joinRow,
	vmloop.IntrJoinRef:  joinRow,
	vmloop.IntrJoinVoid: joinRow,
	vmloop.IntrOutcome:  joinRow,
	// Cancelling a task of another engine needs CapCancelOther on top of
	// the handle (checked in cancel through authorizeCap).
	vmloop.IntrCancel:      {grant: grantHandle, mutates: true, handle: (*Bus).cancel},
	vmloop.IntrYield:       {grant: grantSelf, handle: (*Bus).yield},
	vmloop.IntrCancelled:   {grant: grantSelf, handle: (*Bus).cancelled},
	vmloop.IntrTaskID:      {grant: grantSelf, handle: (*Bus).taskID},
	vmloop.IntrTaskSetName: {grant: grantSelf, handle: (*Bus).setTaskName},

	// event.*
	vmloop.IntrEventNew: {grant: grantSelf, handle: (*Bus).eventNew},
	vmloop.IntrEventWait: {grant: grantHandle, mutates: true, timed: true, handle: (*Bus).eventWait, resume: (*Bus).eventResume,
		abandon: (*Bus).eventAbandon, wait: sched.WaitEvent, describe: (*Bus).describeEvent},
	vmloop.IntrEventSignal:    {grant: grantHandle, mutates: true, handle: (*Bus).eventSignal},
	vmloop.IntrEventBroadcast: {grant: grantHandle, mutates: true, handle: (*Bus).eventBroadcast},

	// io.print_*
	vmloop.IntrPrintI64: {grant: grantSelf, handle: (*Bus).printI64},
	vmloop.IntrPrintF64: {grant: grantSelf, handle: (*Bus).printF64},
	vmloop.IntrPrintStr: {grant: grantSelf, handle: (*Bus).printStr},

	// time.* use the engine's own timer wheel for the calling task;
	// periodic jobs are engine-local timers the task owns.
	vmloop.IntrTimeSleep:      {grant: grantSelf, handle: (*Bus).timeSleep, resume: (*Bus).sleepResume, wait: sched.WaitTimer},
	vmloop.IntrTimeSleepUntil: {grant: grantSelf, handle: (*Bus).timeSleepUntil, resume: (*Bus).sleepResume, wait: sched.WaitTimer},
	vmloop.IntrTimeTimeout:    {grant: grantSelf, handle: (*Bus).timeTimeout},
	vmloop.IntrTimePeriodic:   {grant: grantSelf, handle: (*Bus).timePeriodic},
	vmloop.IntrTimeTick: {grant: grantHandle, handle: (*Bus).timeTick, resume: (*Bus).tickResume,
		wait: sched.WaitTimer, describe: (*Bus).describeTick},
	vmloop.IntrTimeJobMetric: {grant: grantHandle, handle: (*Bus).timeJobMetric},
	vmloop.IntrTimeJobStats:  {grant: grantHandle, handle: (*Bus).timeJobStats},

	// chan.*: making a channel touches nothing shared; every other
	// operation is granted by the channel handle (only a task given the
	// handle can name the channel), and a send or receive wakes tasks of
	// whatever engine waits on it. The element type of a typed one is in
	// its vmloop row (Intrinsic.Elem).
	vmloop.IntrChanNewI64:     {grant: grantSelf, handle: (*Bus).chanNew},
	vmloop.IntrChanNewF64:     {grant: grantSelf, handle: (*Bus).chanNew},
	vmloop.IntrChanNewRef:     {grant: grantSelf, handle: (*Bus).chanNew},
	vmloop.IntrChanSendI64:    chanSendRow,
	vmloop.IntrChanSendF64:    chanSendRow,
	vmloop.IntrChanSendRef:    chanSendRow,
	vmloop.IntrChanTrySendI64: {grant: grantHandle, mutates: true, handle: (*Bus).chanTrySend},
	vmloop.IntrChanTrySendF64: {grant: grantHandle, mutates: true, handle: (*Bus).chanTrySend},
	vmloop.IntrChanTrySendRef: {grant: grantHandle, mutates: true, handle: (*Bus).chanTrySend},
	vmloop.IntrChanRecvI64:    chanRecvRow,
	vmloop.IntrChanRecvF64:    chanRecvRow,
	vmloop.IntrChanRecvRef:    chanRecvRow,
	vmloop.IntrChanTryRecv:    {grant: grantHandle, mutates: true, handle: (*Bus).chanTryRecv},
	vmloop.IntrChanClose:      {grant: grantHandle, mutates: true, handle: (*Bus).chanClose},
	vmloop.IntrChanLen:        {grant: grantHandle, handle: (*Bus).chanLen},
	vmloop.IntrChanCap:        {grant: grantHandle, handle: (*Bus).chanCap},
	// The drain channel is the runtime's, open to every task: it only
	// closes, and nothing can be sent on it or close it.
	vmloop.IntrChanDrain: {grant: grantSelf, handle: (*Bus).chanDrain},

	// sel.*: a select belongs to the task that made it (selArg checks);
	// its cases are granted by the channel handles they name. sel.wait
	// is not a timed row: it takes time.timeout itself, through
	// timedWaitOwn, beside its own deadline operand.
	vmloop.IntrSelNew:      {grant: grantSelf, handle: (*Bus).selNew},
	vmloop.IntrSelRecv:     {grant: grantHandle, handle: (*Bus).selRecv},
	vmloop.IntrSelEvent:    {grant: grantHandle, handle: (*Bus).selEvent},
	vmloop.IntrSelSendI64:  {grant: grantHandle, handle: (*Bus).selSend},
	vmloop.IntrSelSendF64:  {grant: grantHandle, handle: (*Bus).selSend},
	vmloop.IntrSelSendRef:  {grant: grantHandle, handle: (*Bus).selSend},
	vmloop.IntrSelSetI64:   {grant: grantHandle, handle: (*Bus).selSet},
	vmloop.IntrSelSetF64:   {grant: grantHandle, handle: (*Bus).selSet},
	vmloop.IntrSelSetRef:   {grant: grantHandle, handle: (*Bus).selSet},
	vmloop.IntrSelWait:     {grant: grantHandle, mutates: true, handle: (*Bus).selWait, resume: (*Bus).selWaitResume, abandon: (*Bus).selWaitAbandon},
	vmloop.IntrSelValueI64: {grant: grantHandle, handle: (*Bus).selValue},
	vmloop.IntrSelValueF64: {grant: grantHandle, handle: (*Bus).selValue},
	vmloop.IntrSelValueRef: {grant: grantHandle, handle: (*Bus).selValue},
	vmloop.IntrSelClosed:   {grant: grantHandle, handle: (*Bus).selClosed},
	// A socket's case names a handle only its owner may use (selAddIO
	// checks), under the engine's io capability as every socket use.
	vmloop.IntrSelReadable:   {grant: grantCap, need: CapIO, handle: (*Bus).selReadable},
	vmloop.IntrSelAcceptable: {grant: grantCap, need: CapIO, handle: (*Bus).selAcceptable},
	vmloop.IntrSelJoin:       {grant: grantHandle, handle: (*Bus).selAddJoin},
}

// Rows shared by the typed forms of one operation (the handler reads the
// type from the request's intrinsic).
var (
	// joinRow: task.join_* and task.outcome (completeJoin reads which).
	joinRow = command{grant: grantHandle, timed: true, first: true, handle: (*Bus).join, resume: (*Bus).joinResume,
		wait: sched.WaitJoin, describe: (*Bus).describeJoin}
	chanSendRow = command{grant: grantHandle, mutates: true, timed: true, handle: (*Bus).chanSend, resume: (*Bus).chanSendResume, abandon: (*Bus).chanAbandon}
	chanRecvRow = command{grant: grantHandle, mutates: true, timed: true, handle: (*Bus).chanRecv, resume: (*Bus).chanRecvResume, abandon: (*Bus).chanAbandon}
)

// commands is indexed by central intrinsic ID (a slice, not a map: one
// lookup per intrinsic call); built once at init from commandRows and
// ioRows.
var commands []*command

// commandOf returns id's row, or nil.
func commandOf(id vmloop.IntrinsicID) *command {
	if int(id) < len(commands) {
		return commands[id]
	}
	return nil
}

func init() {
	set := func(id vmloop.IntrinsicID, c command) {
		for int(id) >= len(commands) {
			commands = append(commands, nil)
		}
		if commands[id] != nil {
			panic(fmt.Sprintf("bus: intrinsic %d has two command rows", id))
		}
		commands[id] = &c
	}
	for id, c := range commandRows {
		set(id, c)
	}
	for id, op := range ioRows {
		set(id, ioCommandRow(op))
	}
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
		if c.first {
			if target := b.runFirst(t, ex); target != nil {
				// No timeout bounds it, and the target is resolved: the
				// join goes on with it, as timedWait would with no
				// timeout to take, arm or drop (BenchmarkSpawnJoin).
				// TakeTimeout ends the last wait's deadline all the same.
				b.ctl.TakeTimeout(t)
				return b.joinTask(t, ex, req, target)
			}
		}
		return b.timedWait(t, ex, req, c.handle)
	}
	return c.handle(b, t, ex, req)
}

// runFirst runs the target of t's join, argument 0, before the join looks
// at it, when it waits to run next on t's worker (sched.Control.RunFirst):
// the join then finds it completed instead of waiting for it. Not when a
// one-shot timeout bounds the join (its wait is measured from the
// request), and not for a bad argument, which the join itself reports.
// It returns the target, or nil for a bad argument or a join a timeout
// bounds (the join resolves its argument and takes the timeout itself).
// The nested run cannot set t's timeout: only t's own time.timeout does.
func (b *Bus) runFirst(t *sched.Task, ex *vmloop.Exec) *sched.Task {
	if b.ctl.TimeoutSet(t) {
		return nil
	}
	obj, err := ex.ArgObj(0, vmloop.KindTask)
	if err != nil {
		return nil
	}
	target := obj.(*sched.Task)
	if target.State() == sched.Runnable {
		b.ctl.RunFirst(t, target)
	}
	return target
}

// resumeCommand runs the resume of req's row.
func (b *Bus) resumeCommand(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	if c := commandOf(req.Intr.ID); c != nil && c.resume != nil {
		return c.resume(b, t, ex, req)
	}
	return trap(ex, vmloop.TrapInfo{Code: vmloop.TrapIntrinsic, Msg: "unexpected resume of " + req.Intr.Name})
}
