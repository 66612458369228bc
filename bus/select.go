package bus

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/jadevm/jade/internal/chans"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// The sel.* intrinsics (ABI 1.5) over chans.Select: a task builds a set
// of channel cases once (sel.recv, sel.send_*) and waits on it any number
// of times (sel.wait), each wait performing exactly one case (chans'
// Select comment). Events (sel.event), and since ABI 1.6 sockets and
// tasks' ends (select_io.go), are cases too (chans.Other). A parked wait is one host wait of the task
// (Control.Suspend); the wake of a case is CompleteHostFrom, whose one
// compare-and-swap on the wait word decides against the other cases, the
// deadline and a cancel. The result slot carries i64 case<<1|closed for a
// send case or a closed channel, or the message (an ext value, whose
// SelCase names the case) for a receive.

// selObj is a select: the ext object sel.new makes. It belongs to the
// task that made it; only that task may use it, so at most one wait of
// it is ever in progress.
type selObj struct {
	b     *Bus
	s     *chans.Select
	owner uint64 // the ID of the task that made it
	// t is the owner (set by every wait, before its cases are polled);
	// tok is the wake token of the parked wait, written by Arm under
	// every case's mutex, read by a wake under one of them.
	t   *sched.Task
	tok sched.Token
	// The outcome of the last wait; only the owner touches them.
	fired    int      // the case that fired; -1: the deadline
	got      *gotSlot // a receive case's message not read yet (sel.value_*)
	closed   bool     // the fired case's channel was closed (a receive got nothing)
	ownFirst bool     // the timer of the parked wait is sel.wait's deadline, not time.timeout
	// release gives back a message handed to the owner if it is
	// cancelled before it resumes (made once: no closure per wake).
	release func(vmloop.Value)
}

func newSelObj(b *Bus, t *sched.Task) *selObj {
	o := &selObj{b: b, s: chans.NewSelect(), owner: t.ID(), fired: -1, got: &gotSlot{}}
	// A message received but never read (its task was cancelled, or
	// dropped the select) gives its charge back when the select is
	// collected.
	runtime.AddCleanup(o, func(g *gotSlot) {
		if g.m != nil {
			g.m.Release()
		}
	}, o.got)
	o.release = func(v vmloop.Value) {
		m := v.Obj().(*chans.Msg)
		c, _ := o.s.Case(m.SelCase())
		c.Requeue(m, nil)
	}
	return o
}

// gotSlot holds a received message until sel.value_* reads it.
type gotSlot struct{ m *chans.Msg }

func (o *selObj) String() string { return fmt.Sprintf("select(%d cases)", o.s.Len()) }

// Arm starts the owner's wait (chans.SelWaiter).
func (o *selObj) Arm() { o.tok = o.b.ctl.Suspend(o.t) }

// Live reports whether the parked wait has not ended.
func (o *selObj) Live() bool { return o.tok.Live() }

// WakeCase ends the parked wait with case i.
func (o *selObj) WakeCase(i int, r chans.Result) bool {
	by, _ := r.By.(*sched.Task)
	switch {
	case r.Msg != nil:
		return o.b.ctl.CompleteHostFrom(by, o.tok, vmloop.Ext(vmloop.KindExt, r.Msg), o.release)
	case r.Closed:
		return o.b.ctl.CompleteHostFrom(by, o.tok, vmloop.I64(int64(i)<<1|1), nil)
	}
	return o.b.ctl.CompleteHostFrom(by, o.tok, vmloop.I64(int64(i)<<1), nil)
}

// selArg is argument 0 as a select of the calling task.
func selArg(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) (*selObj, sched.Action) {
	obj, err := ex.ArgObj(0, vmloop.KindExt)
	if err != nil {
		return nil, trap(ex, err)
	}
	o, ok := obj.(*selObj)
	if !ok {
		return nil, trap(ex, vmloop.TrapInfo{Code: vmloop.TrapHandle, Msg: fmt.Sprintf("%s: argument is %s, want a select (sel.new)", req.Intr.Name, extName(obj))})
	}
	if o.owner != t.ID() {
		return nil, raise(ex, vmloop.Err(vmloop.ErrKindError, fmt.Sprintf("%s: the select belongs to task %d, not to this task (%d); a select is used only by the task that made it", req.Intr.Name, o.owner, t.ID())))
	}
	return o, sched.ActContinue
}

func (b *Bus) selNew(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	return complete(ex, vmloop.Ext(vmloop.KindExt, newSelObj(b, t)), sched.ActContinue)
}

// selEvent: sel.event sel, ev; the result is the new case's index.
func (b *Bus) selEvent(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	o, a := selArg(t, ex, req)
	if o == nil {
		return a
	}
	obj, err := ex.ArgObj(1, vmloop.KindEvent)
	if err != nil {
		return trap(ex, err)
	}
	return complete(ex, vmloop.I64(int64(o.s.AddOther(&evCase{obj.(*sched.Event), o}))), sched.ActContinue)
}

// selChanArgs is the select and the channel of sel.recv sel, ch and
// sel.send_* sel, ch, v.
func selChanArgs(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) (*selObj, *chans.Chan, sched.Action) {
	o, a := selArg(t, ex, req)
	if o == nil {
		return nil, nil, a
	}
	obj, err := ex.ArgObj(1, vmloop.KindExt)
	if err != nil {
		return nil, nil, trap(ex, err)
	}
	c, ok := obj.(*chans.Chan)
	if !ok {
		return nil, nil, trap(ex, vmloop.TrapInfo{Code: vmloop.TrapHandle, Msg: fmt.Sprintf("%s: argument 2 is %s, want a channel", req.Intr.Name, extName(obj))})
	}
	return o, c, sched.ActContinue
}

// selRecv: sel.recv sel, ch; the result is the new case's index.
func (b *Bus) selRecv(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	o, c, a := selChanArgs(t, ex, req)
	if o == nil {
		return a
	}
	return complete(ex, vmloop.I64(int64(o.s.Recv(c))), sched.ActContinue)
}

// selSend: sel.send_* sel, ch, v; the result is the new case's index.
func (b *Bus) selSend(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	o, c, a := selChanArgs(t, ex, req)
	if o == nil {
		return a
	}
	if c.Elem() != chanElem(req.Intr) {
		return trap(ex, vmloop.TrapInfo{Code: vmloop.TrapHandle, Msg: fmt.Sprintf("%s: wrong element type: the channel carries %s", req.Intr.Name, c.Elem())})
	}
	if c == b.drain {
		return raise(ex, drainSendErr(req))
	}
	m, a, ok := b.messageArg(t, ex, req, c.Elem(), 2)
	if !ok {
		return a
	}
	i := o.s.Send(c)
	if err := o.s.SetMsg(i, m); err != nil {
		m.Release()
		return trap(ex, vmloop.TrapInfo{Code: vmloop.TrapIntrinsic, Msg: err.Error()})
	}
	return complete(ex, vmloop.I64(int64(i)), sched.ActContinue)
}

// selSet: sel.set_* sel, i, v gives send case i its next value.
func (b *Bus) selSet(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	o, a := selArg(t, ex, req)
	if o == nil {
		return a
	}
	i := ex.ArgI64(1)
	if i < 0 || i >= int64(o.s.Len()) {
		return raise(ex, vmloop.Err(vmloop.ErrKindError, fmt.Sprintf("%s: case %d out of range (the select has %d cases)", req.Intr.Name, i, o.s.Len())))
	}
	c, send := o.s.Case(int(i))
	if !send {
		return raise(ex, vmloop.Err(vmloop.ErrKindError, fmt.Sprintf("%s: case %d is not a send case", req.Intr.Name, i)))
	}
	if c.Elem() != chanElem(req.Intr) {
		return trap(ex, vmloop.TrapInfo{Code: vmloop.TrapHandle, Msg: fmt.Sprintf("%s: wrong element type: case %d's channel carries %s", req.Intr.Name, i, c.Elem())})
	}
	m, a, ok := b.messageArg(t, ex, req, c.Elem(), 2)
	if !ok {
		return a
	}
	if err := o.s.SetMsg(int(i), m); err != nil {
		m.Release()
		return trap(ex, vmloop.TrapInfo{Code: vmloop.TrapIntrinsic, Msg: err.Error()})
	}
	return completeVoid(ex, sched.ActContinue)
}

// selWait: sel.wait sel, timeout. A wait that has to wait is bounded by
// its own deadline (timeout ≥ 0, in nanoseconds; then the result is -1)
// and by time.timeout (TimeoutError), whichever comes first
// (timedWaitOwn).
func (b *Bus) selWait(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	o, a := selArg(t, ex, req)
	if o == nil {
		return a
	}
	if o.s.Len() == 0 {
		return raise(ex, vmloop.Err(vmloop.ErrKindError, req.Intr.Name+": the select has no cases (add them with sel.recv and sel.send_*)"))
	}
	if o.got.m != nil { // the last received value was never read
		o.got.m.Release()
		o.got.m = nil
	}
	o.fired, o.closed = -1, false
	o.t = t
	d := ex.ArgI64(1)
	if d == 0 { // a poll: never waits
		f, err := o.s.Wait(nil, t)
		if err != nil {
			return trap(ex, vmloop.TrapInfo{Code: vmloop.TrapIntrinsic, Msg: req.Intr.Name + ": " + err.Error()})
		}
		return b.selFired(o, ex, req, f)
	}
	a, o.ownFirst = b.timedWaitOwn(t, ex, req, d, (*Bus).selPark)
	return a
}

// selPark is sel.wait's wait under timedWaitOwn: a ready case fires at
// once, else the task parks on every case.
func (b *Bus) selPark(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	o, a := selArg(t, ex, req)
	if o == nil {
		return a
	}
	f, err := o.s.Wait(o, t)
	if err != nil {
		return trap(ex, vmloop.TrapInfo{Code: vmloop.TrapIntrinsic, Msg: req.Intr.Name + ": " + err.Error()})
	}
	if f.Case < 0 {
		return sched.ActSuspend
	}
	return b.selFired(o, ex, req, f)
}

// selFired finishes a wait whose case f fired (f.Case -1: the deadline).
func (b *Bus) selFired(o *selObj, ex *vmloop.Exec, req *vmloop.Request, f chans.Fired) sched.Action {
	o.fired = f.Case
	if f.Case < 0 {
		return complete(ex, vmloop.I64(-1), sched.ActContinue)
	}
	if _, send := o.s.Case(f.Case); send {
		if f.Closed {
			return raise(ex, closedErr(req, fmt.Sprintf("case %d: send on a closed channel (the value was not sent)", f.Case)))
		}
		o.s.Sent(f.Case)
	} else {
		o.got.m, o.closed = f.Msg, f.Closed
		if oc, ok := o.s.IsOther(f.Case); ok {
			if ic, ok := oc.(*ioCase); ok && ic.h.kind == "conn" {
				ic.h.ready = true
			}
		}
	}
	return complete(ex, vmloop.I64(int64(f.Case)), sched.ActContinue)
}

func (b *Bus) selWaitResume(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	o, a := selArg(t, ex, req)
	if o == nil {
		return a
	}
	if b.ctl.TimedOut(t) {
		// A wake that lost to the timer may still be withdrawing its
		// result under a channel's mutex: wait it out (as chan.recv).
		o.s.Sync()
		if o.ownFirst {
			return b.selFired(o, ex, req, chans.Fired{Case: -1})
		}
		return timedOut(ex, req, "a select case")
	}
	v, _, _, ok := b.ctl.TakeHostResult(t)
	if !ok {
		return trap(ex, vmloop.TrapInfo{Code: vmloop.TrapIntrinsic, Msg: req.Intr.Name + ": resumed without a result"})
	}
	return b.selFired(o, ex, req, selResult(v))
}

// selResult decodes the result a case's wake stored.
func selResult(v vmloop.Value) chans.Fired {
	if v.Kind() == vmloop.KindExt {
		m := v.Obj().(*chans.Msg)
		return chans.Fired{Case: m.SelCase(), Msg: m}
	}
	return chans.Fired{Case: int(v.Int() >> 1), Closed: v.Int()&1 == 1}
}

// selAbandon: the owner was cancelled after a case's wake won, before it
// resumed. A message handed over goes back to its channel's head; a send
// that fired was sent (its message is the receiver's now).
func (b *Bus) selAbandon(t *sched.Task) {
	obj, err := b.ctl.Exec(t).ArgObj(0, vmloop.KindExt)
	o, ok := obj.(*selObj)
	if err != nil || !ok {
		b.ctl.DropHostResult(t)
		return
	}
	v, _, _, ok := b.ctl.TakeHostResult(t)
	if !ok {
		return
	}
	f := selResult(v)
	if f.Msg != nil {
		o.release(v)
		return
	}
	if oc, ok := o.s.IsOther(f.Case); ok {
		if ec, ok := oc.(*evCase); ok {
			// The signal was meant for a waiter that will not run: the
			// next one gets it (or the event keeps it), as for event.wait.
			b.ctl.EventSignal(t, ec.ev)
		}
		// A socket's case took nothing.
		return
	}
	if _, send := o.s.Case(f.Case); send && !f.Closed {
		o.s.Sent(f.Case)
	}
}

// evCase is an event's wait as a select case (chans.Other): a kept
// signal fires it at once; a parked one is woken by a signal, which goes
// on to the next waiter when the wake loses (the event keeps it).
type evCase struct {
	ev *sched.Event
	o  *selObj
}

func (c *evCase) Lock()            { c.ev.Lock() }
func (c *evCase) Unlock()          { c.ev.Unlock() }
func (c *evCase) PollLocked() bool { return c.ev.TakeSignalLocked() }
func (c *evCase) ParkLocked(i int) { c.ev.ParkLocked(c.o.tok, int64(i)<<1) }
func (c *evCase) Key() uintptr     { return uintptr(unsafe.Pointer(c.ev)) }

// selValue: sel.value_* sel, the value the last wait's receive case got.
func (b *Bus) selValue(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	o, a := selArg(t, ex, req)
	if o == nil {
		return a
	}
	if o.fired < 0 {
		return raise(ex, vmloop.Err(vmloop.ErrKindError, req.Intr.Name+": the last sel.wait fired no case"))
	}
	c, send := o.s.Case(o.fired)
	if c == nil {
		what := "an event case"
		if oc, _ := o.s.IsOther(o.fired); oc != nil {
			switch oc.(type) {
			case *ioCase:
				what = "a socket's case (read or accept it)"
			case *joinCase:
				what = "a join case (join the task)"
			}
		}
		return raise(ex, vmloop.Err(vmloop.ErrKindError, fmt.Sprintf("%s: the last sel.wait fired case %d, %s: there is no value", req.Intr.Name, o.fired, what)))
	}
	if send {
		return raise(ex, vmloop.Err(vmloop.ErrKindError, fmt.Sprintf("%s: the last sel.wait fired case %d, a send case: there is no value", req.Intr.Name, o.fired)))
	}
	if c.Elem() != chanElem(req.Intr) {
		return trap(ex, vmloop.TrapInfo{Code: vmloop.TrapHandle, Msg: fmt.Sprintf("%s: wrong element type: case %d's channel carries %s", req.Intr.Name, o.fired, c.Elem())})
	}
	if o.closed {
		return raise(ex, closedErr(req, fmt.Sprintf("case %d: the channel is closed and drained", o.fired)))
	}
	if o.got.m == nil {
		return raise(ex, vmloop.Err(vmloop.ErrKindError, fmt.Sprintf("%s: case %d's value was already read", req.Intr.Name, o.fired)))
	}
	// A large value is imported in steps (ActMore), as a receive's is
	// (deliverSteps): the request, dispatched again, finds the same value
	// under import. The select keeps the message until the import ends: a
	// task dropped meanwhile leaves it to the select, as an unread value.
	more, room, err := ex.CompleteIfRoomMore(o.got.m.Value())
	if more {
		return sched.ActMore
	}
	if !room || err != nil {
		if !room {
			var ti vmloop.TrapInfo
			errors.As(err, &ti)
			return raise(ex, vmloop.Err(vmloop.ErrKindResource, fmt.Sprintf("%s: the message does not fit this task's heap (the select keeps it): %s", req.Intr.Name, ti.Msg)))
		}
		return trap(ex, err)
	}
	b.takeCargo(t, o.got.m)
	o.got.m.Release()
	o.got.m = nil
	return sched.ActContinue
}

// selClosed: sel.closed sel, 1 when the last wait's receive case found its
// channel closed and drained.
func (b *Bus) selClosed(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	o, a := selArg(t, ex, req)
	if o == nil {
		return a
	}
	n := int64(0)
	if o.closed {
		n = 1
	}
	return complete(ex, vmloop.I64(n), sched.ActContinue)
}
