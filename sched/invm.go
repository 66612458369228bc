package sched

import (
	"github.com/jadevm/jade/internal/vmhook"
	"github.com/jadevm/jade/vmloop"
)

// The requests the VM loop answers itself for a task record running on
// its worker, through vmloop's hooks (sched/doc.go, "Requests answered in
// the VM loop"): each does what the bus's answer to the request would,
// minus the loop's exit and the dispatch around it.

func init() {
	vmhook.SetTimeout = setTimeoutInVM
	vmhook.Signal = signalInVM
	vmhook.Wait = waitInVM
	vmhook.Spawn = spawnInVM
	vmhook.Join = joinInVM
}

// signalInVM is vmloop's event.signal for holder, the Exec of a task
// record running on the calling worker: Control.EventSignal without a
// request. ev is the object of an event handle of holder's heap, so of
// holder's scheduler (the bus binds every event at its entry into a
// heap); false for any other object (the request then traps).
func signalInVM(holder any, ev any) bool {
	e, ok := ev.(*Event)
	if !ok {
		return false
	}
	t := recordOf(holder.(*vmloop.Exec))
	e.signal(t.engine.s, t)
	return true
}

// setTimeoutInVM is vmloop's time.timeout for holder, the Exec of a task
// record running on the calling worker (the only one that touches the
// record's timer state while it runs): Control.SetTimeout without a
// request; false when its engine has no timer wheel (the bus throws).
func setTimeoutInVM(holder any, d int64) bool {
	t := recordOf(holder.(*vmloop.Exec))
	if !t.engine.HasWheel() {
		return false
	}
	setTimeout(t, d)
	return true
}

// waitInVM is vmloop's event.wait for holder, the Exec of a task record
// running on the calling worker: Control.EventWait without a request,
// when no one-shot timeout bounds the wait (the request's answer arms it:
// WaitRequest). As the request's answer does, it forgets the last wait's
// deadline first (TakeTimeout); an armed wait is parked by runs (SigWait).
func waitInVM(holder any, ev any) int {
	e, ok := ev.(*Event)
	if !ok {
		return vmhook.WaitRequest
	}
	t := recordOf(holder.(*vmloop.Exec))
	if t.timeoutSet() {
		return vmhook.WaitRequest
	}
	takeTimeout(t) // none to take: the last wait's deadline is forgotten
	tok := t.arm()
	if e.wait(tok) {
		t.disarm()
		return vmhook.WaitDone
	}
	return vmhook.WaitArmed
}

// spawnInVM is vmloop's spawn for holder, the Exec of a task record
// running on the calling worker and stopped at its spawn request: what
// the bus's answer does (PrepareSpawn, the child's handle into the
// spawner's heap, Launch), when the engine may spawn from bytecode
// (Control.SpawnInLoop: the bus's capability check, made once; vmloop
// leaves a spawn with an ext argument to the bus, which hands descriptors
// to the child). A spawn that fails, or whose arguments' copy takes more
// than a step, is left to the request, which reports the failure or goes
// on with the copy (makeTask keeps it: takeSpawn).
func spawnInVM(holder any) (int64, int) {
	ex := holder.(*vmloop.Exec)
	t := recordOf(ex)
	e := t.engine
	if !e.spawnInLoop {
		return 0, vmhook.SpawnRequest
	}
	c := Control{s: e.s}
	child, err := c.PrepareSpawn(t)
	if err != nil {
		return 0, vmhook.SpawnRequest
	}
	did, w := vmhook.SpawnDone, t.runner()
	if err := ex.CompleteTask(child); err != nil {
		ex.SetTrapErr(err)
		did = vmhook.SpawnTrapped
	}
	w.inVM = true // Launch's push may be lazy (enqueue)
	c.Launch(t, child)
	w.inVM = false
	return spawnCost(e.cfg.Load().ReductionLimit), did
}

// joinInVM is vmloop's join for holder, the Exec of a task record running
// on the calling worker and stopped at its join request of target, with
// left reductions of its slice left: what the bus's answer does when no
// one-shot timeout bounds the join (the request's answer arms it) and
// target has completed with an inline result, or completes in a run first
// (Control.RunFirst, on the slice's budget: w.left is brought up to date
// with the loop's first, and the loop takes it back); anything else is
// left to the request.
func joinInVM(holder any, target any, left int64) (int, uint64, int64, int) {
	t := recordOf(holder.(*vmloop.Exec))
	tg, ok := target.(*Task)
	if !ok || t.timeoutSet() {
		return 0, 0, left, vmhook.JoinRequest
	}
	k, bits, ok := tg.InlineOutcome()
	if !ok {
		w := t.runner()
		w.spent += w.left - left // the loop's use of the slice so far
		w.left = left
		c := Control{s: t.engine.s}
		if !c.RunFirst(t, tg) {
			return 0, 0, left, vmhook.JoinRequest
		}
		left = w.left
		if k, bits, ok = tg.InlineOutcome(); !ok {
			return 0, 0, left, vmhook.JoinRequest
		}
	}
	takeTimeout(t) // none to take: the last wait's deadline is forgotten
	return int(k), bits, left, vmhook.JoinDone
}
