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
	if t.tm != nil && t.tm.hasTimeout {
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
