package vmloop

import (
	"github.com/jadevm/jade/internal/monoclock"
	"github.com/jadevm/jade/internal/vmhook"
)

// The intrinsics of the scheduler's families that the VM loop runs
// itself (Intrinsic.InVM), because they read only what a task may read
// without the scheduler: a request to it would cost far more than the
// answer (std/http makes one of each per request: docs/PERFORMANCE.md,
// "The reply head in one intrinsic, and two requests fewer"). Each
// charges one reduction.
//
//   - time.now reads the master clock (internal/monoclock), the one the
//     scheduler's timers read, or the clock a test set (vmhook.SetClock).
//   - chan.closed reports whether a channel of the task's heap is
//     closed (std/http polls the drain's channel with it before each
//     reply).
var loneRows = map[IntrinsicID]vmRow{
	IntrTimeNow:    {run: (*Exec).timeNow},
	IntrChanClosed: {run: (*Exec).chanClosed},
}

// vmRowByID indexes the http family's rows and loneRows by ID: what
// inVMOp runs for an in-loop intrinsic outside the map family.
var vmRowByID = indexRows(func() map[IntrinsicID]vmRow {
	rows := make(map[IntrinsicID]vmRow, len(httpRows)+len(loneRows))
	for _, m := range []map[IntrinsicID]vmRow{httpRows, loneRows} {
		for id, row := range m {
			rows[id] = row
		}
	}
	return rows
}())

// InVM reports whether the VM loop runs the intrinsic itself, so that it
// never leaves the loop as a Request: the intrinsics of the InVM families
// and the lone rows of others (loneRows).
func (in *Intrinsic) InVM() bool { return vmKindOf(in.ID) == vmAlways }

// vmKind says where the VM loop answers an intrinsic.
type vmKind uint8

const (
	vmRequest vmKind = iota // a request to the scheduler
	vmAlways                // in the loop (Intrinsic.InVM)
	vmFirst                 // in the loop when it can (answerInVM), else a request
)

// vmKindFor classifies central intrinsic id of family fam.
func vmKindFor(id IntrinsicID, fam Family) vmKind {
	switch {
	case fam.InVM() || rowOf(vmRowByID, id) != nil:
		return vmAlways
	case id == IntrTimeTimeout, id == IntrEventSignal, id == IntrEventWait:
		return vmFirst
	}
	return vmRequest
}

// vmKindOf returns where the VM loop answers intrinsic id (one load: the
// INTR instruction's slow path asks it of every intrinsic).
func vmKindOf(id IntrinsicID) vmKind {
	if int(id) < len(vmByID) {
		return vmByID[id]
	}
	return vmRequest
}

// inVMOp runs the in-VM intrinsic in of the INTR instruction ins: a map
// operation, or its row (vmRowByID); an ID without one traps.
func (e *Exec) inVMOp(in *Intrinsic, ins Instr, r regs, left int64) (int64, opStatus) {
	if FamilyOf(in.ID) == FamMap {
		return e.mapOp(in.ID, ins, r, left)
	}
	row := rowOf(vmRowByID, in.ID)
	if row == nil {
		e.x().trap = TrapInfo{Code: TrapIntrinsic, Msg: "no in-VM implementation of " + in.Name}
		return left, opTrap
	}
	return row.run(e, ins, r, left)
}

// answerInVM answers the request that INTR instruction ins (at pc) makes
// of intrinsic in (vmFirst) in the VM loop when it can (ok), leaving it a
// request to the scheduler otherwise. Each answer is the scheduler's,
// through a hook, and only for a task record's Exec running on its
// worker; c is what step returns:
//
//   - time.timeout (vmhook.SetTimeout): the timeout is the task's, kept
//     where the scheduler's next wait takes it; std/http sets one before
//     each write. It charges one reduction.
//   - event.signal and event.wait (eventInVM).
func (e *Exec) answerInVM(in *Intrinsic, ins Instr, r regs, pc int) (c ctl, ok bool) {
	if e.heap.holds&trefRecord == 0 {
		return 0, false
	}
	if in.ID == IntrEventSignal || in.ID == IntrEventWait {
		return e.eventInVM(in.ID == IntrEventWait, r.ref(ins.A()), ins, pc)
	}
	f := vmhook.SetTimeout
	if f == nil || !f(e, r.i(ins.A())) {
		return 0, false
	}
	e.left--
	return ctlSafePoint, true // an intrinsic is a safe point
}

// intrinsicCost is the reductions an event intrinsic answered in the loop
// charges: what the scheduler charges a request (sched's intrCost), since
// the wake or wait it makes is most of a request's work.
const intrinsicCost = 32

// eventInVM answers event.signal (wait false) or event.wait (wait true)
// of the event handle x, made by instruction ins at pc, in the VM loop
// for a task record's Exec, through the scheduler's hooks (ok; c is what
// step returns), saving the request's exit, dispatch and resolution of
// the handle (BenchmarkPingPong):
//
//   - a signal wakes one waiter or is kept (vmhook.Signal), and a wait
//     that takes a kept signal goes on (vmhook.Wait); each is a safe
//     point, charged as a request;
//   - a wait the hook armed stops the loop with SigWait and the request
//     recorded, for the scheduler to park the task and complete the
//     request when it resumes.
//
// Otherwise (not a record, a bad handle, a wait a timeout bounds) ok is
// false and nothing is done: the caller makes the request, which traps or
// waits as before.
func (e *Exec) eventInVM(wait bool, x uint64, ins Instr, pc int) (c ctl, ok bool) {
	if e.heap.holds&trefRecord == 0 {
		return 0, false
	}
	sl := e.heap.refOf(x, refWord(KindEvent))
	if sl == nil {
		return 0, false
	}
	if !wait {
		if f := vmhook.Signal; f == nil || !f(e, sl.obj) {
			return 0, false
		}
		e.left -= intrinsicCost
		return ctlSafePoint, true
	}
	var did int
	if f := vmhook.Wait; f != nil {
		did = f(e, sl.obj)
	}
	switch did {
	case vmhook.WaitDone:
		e.left -= intrinsicCost
		return ctlSafePoint, true
	case vmhook.WaitArmed:
		e.setRequest(ins, pc)
		return exit(SigWait), true
	}
	return 0, false
}

// spawnInVM answers the spawn request e has just made (setRequest, at
// pc) in the loop when e is a task record's Exec and the scheduler's
// hook takes it (vmhook.Spawn): the child is made and launched, its
// handle is in the destination, and the spawn's reductions and its
// arguments' copies are charged here; the loop goes on at a safe point.
// Otherwise (not a record, an ext argument: the dispatcher hands
// descriptors to the child) ok is false and the caller leaves the request
// to the scheduler.
func (e *Exec) spawnInVM(pc int) (c ctl, ok bool) {
	f := vmhook.Spawn
	if e.heap.holds&trefRecord == 0 || f == nil || e.spawnHasExt() {
		return 0, false
	}
	cost, did := f(e)
	if did == vmhook.SpawnRequest {
		return 0, false
	}
	e.left -= cost + e.takeCopied()
	if did == vmhook.SpawnTrapped {
		return e.trapped(pc), true
	}
	return ctlSafePoint, true
}

// spawnHasExt reports whether a reference argument of e's pending spawn
// request is an ext object (a socket or file handle, a channel): the
// answer in the VM loop leaves such a spawn to the dispatcher, which
// hands descriptors to the child.
func (e *Exec) spawnHasExt() bool {
	f := &e.prog.Funcs[e.req.Func]
	if !f.refParams {
		return false
	}
	r := e.frames[e.fp].base + int(e.req.Base) // a spawn's window
	for _, t := range f.Params {
		// A shared reference (a task, an event) or null is no handle of
		// the heap: only a handle can name an ext object.
		if t == TRef {
			if x := e.regs[r]; x&handleIdxMask != 0 && e.heap.get(x, KindExt) != nil {
				return true
			}
		}
		r++
	}
	return false
}

// joinInVM answers the join request e has just made (setRequest, at pc)
// of the task reference x in the loop when e is a task record's Exec and
// the scheduler's hook finds the target completed with a void, i64 or
// f64 result, or completes it in a run first (vmhook.Join): the result
// is in the destination, the join is charged as its request is, and the
// loop goes on at a safe point. Otherwise ok is false and the caller
// leaves the request to the scheduler (the budget a run first used is
// spent all the same).
func (e *Exec) joinInVM(x uint64, pc int) (c ctl, ok bool) {
	f := vmhook.Join
	if e.heap.holds&trefRecord == 0 || f == nil {
		return 0, false
	}
	sl := e.heap.refOf(x, refWord(KindTask))
	if sl == nil {
		return 0, false // a bad handle, or a task object: the request's
	}
	k, bits, rest, did := f(e, sl.obj, e.left)
	// A run first's reductions are its target's, not this task's (Run
	// counts what its budget lost), as when the request ran it.
	e.reductions -= uint64(e.left - rest)
	e.left = rest
	if did != vmhook.JoinDone {
		return 0, false
	}
	e.left -= intrinsicCost
	var err error
	if e.req.Op == JOINV {
		err = e.CompleteVoid()
	} else {
		err = e.CompleteScalar(Kind(k), bits)
	}
	if err != nil {
		e.SetTrapErr(err)
		return e.trapped(pc), true
	}
	return ctlSafePoint, true
}

// timeNow runs time.now (result in a).
func (e *Exec) timeNow(ins Instr, r regs, left int64) (int64, opStatus) {
	now := monoclock.Now
	if f := vmhook.Clock(); f != nil {
		now = f
	}
	r.setI(ins.A(), now())
	return left - 1, opOK
}

// closer is what chan.closed asks of a channel (internal/chans.Chan).
type closer interface{ Closed() bool }

// chanClosed runs chan.closed (argument a, result in a): 1 once the
// channel is closed, else 0.
func (e *Exec) chanClosed(ins Instr, r regs, left int64) (int64, opStatus) {
	a := ins.A()
	o := e.heap.get(r.ref(a), KindExt)
	if o == nil {
		e.badHandle(r.ref(a), KindExt)
		return left, opTrap
	}
	c, ok := o.x.(closer)
	if !ok {
		e.x().trap = TrapInfo{Code: TrapHandle, Msg: "chan.closed: the argument is not a channel"}
		return left, opTrap
	}
	var v int64
	if c.Closed() {
		v = 1
	}
	r.setI(a, v)
	return left - 1, opOK
}
