package bus

import (
	"errors"
	"fmt"
	"sync"

	"github.com/jadevm/jade/internal/chans"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// The chan.* intrinsics (ABI 1.5) over package chans. A task that must
// wait parks through the scheduler's generic host wait (Control.Suspend):
// its Waiter ends the wait with CompleteHost, whose one compare-and-swap
// on the wait word decides against a timeout or a cancel (chans' package
// comment: exactly once). The result slot carries the waiter itself (an
// ext value), which holds what its wake passed: the message, or closed;
// neither, to a sender: sent.

// taskWaiter is a parked task's side of a channel wait. One is made (or
// taken from waiterPool) per wait; a wait that its wake ended returns it
// to the pool when its task resumes: by then the party that woke it had
// popped it from the channel's queue, and nothing else names it. A waiter
// whose wait ended otherwise (a timeout, a cancel) may stay in a queue,
// stale, and is never reused.
type taskWaiter struct {
	b   *Bus
	tok sched.Token
	// What the wake that won passed, written before that wake publishes
	// them: a receiver's message and its channel (the give-back,
	// requeueHanded, finds both here), or closed. A wake that loses
	// leaves them to no one (the waiter is never woken again).
	ch     *chans.Chan
	msg    *chans.Msg
	closed bool
}

// waiterPool holds the waiters of ended waits for the next ones: a
// parked send or receive allocates nothing in steady state.
var waiterPool = sync.Pool{New: func() any { return new(taskWaiter) }}

// newWaiter arms t's wait and returns its waiter.
func (b *Bus) newWaiter(t *sched.Task) *taskWaiter {
	w := waiterPool.Get().(*taskWaiter)
	w.b, w.tok = b, b.ctl.Suspend(t)
	return w
}

// wokenWaiter returns what the wake of the waiter a resumed task's
// result names passed (a receiver's message and its channel, or closed),
// and returns the waiter to the pool.
func wokenWaiter(v vmloop.Value) (m *chans.Msg, ch *chans.Chan, closed bool) {
	w, _ := v.Obj().(*taskWaiter)
	if w == nil {
		return nil, nil, true
	}
	m, ch, closed = w.msg, w.ch, w.closed
	*w = taskWaiter{}
	waiterPool.Put(w)
	return m, ch, closed
}

// resumeTimedOut reports whether the wait of a resumed chan.send_* or
// chan.recv_* was ended by its timeout, and then settles the channel and
// returns the TimeoutError's action (what: what was waited for). A
// resume by a wake needs no channel argument: its waiter names the
// channel.
func (b *Bus) resumeTimedOut(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request, settle func(*chans.Chan), what string) (sched.Action, bool) {
	if !b.ctl.TimedOut(t) {
		return sched.ActContinue, false
	}
	c, a := chanArg(ex, req, true)
	if c == nil {
		return a, true
	}
	settle(c)
	return timedOut(ex, req, what), true
}

func (w *taskWaiter) Live() bool { return w.tok.Live() }

func (w *taskWaiter) Wake(r chans.Result) bool {
	by, _ := r.By.(*sched.Task)
	var release func(vmloop.Value)
	switch {
	case r.Msg != nil:
		// A receiver cancelled after this wake won, before it resumed,
		// gives the message back (Abandon → DropHostResult → release).
		w.ch, w.msg, release = r.Chan, r.Msg, requeueHanded
	case r.Closed:
		w.closed = true
	}
	return w.b.ctl.CompleteHostFrom(by, w.tok, vmloop.Ext(vmloop.KindExt, w), release)
}

// requeueHanded gives the message a receiver's wake handed over back to
// the head of its channel: the receiver was cancelled before it resumed.
func requeueHanded(v vmloop.Value) {
	w := v.Obj().(*taskWaiter)
	w.ch.Requeue(w.msg, nil)
}

// chanElem is the element type of typed channel or select intrinsic in,
// from its row (vmloop chan_rows.go), or elemNone for one of none (no
// channel carries it: a typed check against it fails).
func chanElem(in *vmloop.Intrinsic) chans.Elem {
	switch in.Elem() {
	case vmloop.TI64:
		return chans.ElemI64
	case vmloop.TF64:
		return chans.ElemF64
	case vmloop.TRef:
		return chans.ElemRef
	}
	return elemNone
}

// elemNone is the element type of no channel.
const elemNone chans.Elem = 255

// chanArg is argument 0 as a channel whose element type fits the
// intrinsic (any for the untyped ones); a mismatch traps, as a typed join
// of the wrong kind does (the verifier rejects it where it can see it).
func chanArg(ex *vmloop.Exec, req *vmloop.Request, typed bool) (*chans.Chan, sched.Action) {
	obj, err := ex.ArgObj(0, vmloop.KindExt)
	if err != nil {
		return nil, trap(ex, err)
	}
	c, ok := obj.(*chans.Chan)
	if !ok {
		return nil, trap(ex, vmloop.TrapInfo{Code: vmloop.TrapHandle, Msg: fmt.Sprintf("%s: argument is %s, want a channel", req.Intr.Name, extName(obj))})
	}
	if typed && c.Elem() != chanElem(req.Intr) {
		return nil, trap(ex, vmloop.TrapInfo{Code: vmloop.TrapHandle, Msg: fmt.Sprintf("%s: wrong element type: the channel carries %s", req.Intr.Name, c.Elem())})
	}
	return c, sched.ActContinue
}

func closedErr(req *vmloop.Request, what string) vmloop.Value {
	return vmloop.Err(vmloop.ErrKindClosed, req.Intr.Name+": "+what)
}

// chanNew: chan.new_i64/f64/ref cap.
func (b *Bus) chanNew(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	n := ex.ArgI64(0)
	elem := chanElem(req.Intr)
	if elem == elemNone {
		return trap(ex, vmloop.TrapInfo{Code: vmloop.TrapIntrinsic, Msg: req.Intr.Name + ": no element type in its row"})
	}
	c, err := chans.New(elem, n)
	if err != nil {
		return raise(ex, vmloop.Err(vmloop.ErrKindError, fmt.Sprintf("%s: capacity %d is negative (0 makes a rendezvous channel)", req.Intr.Name, n)))
	}
	c.SetOwner(b)
	return complete(ex, vmloop.Ext(vmloop.KindExt, c), sched.ActContinue)
}

// message copies argument 1 out of the heap and charges it to the
// engine's memory budget; ok false: the action throws, or, for ActMore,
// the copy has more steps.
func (b *Bus) message(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request, elem chans.Elem) (*chans.Msg, sched.Action, bool) {
	return b.messageArg(t, ex, req, elem, 1)
}

// messageArg is message of argument ai. A reference is copied out of the
// heap in bounded steps (vmloop.Exec.ArgValueMore), charged to t: while
// steps remain it answers ActMore, the request stays pending and is
// dispatched again, and this handler runs again from the start (its
// checks before the copy change nothing) until the copy is done. Only
// then is the message made and offered, so a send is still all or
// nothing.
func (b *Bus) messageArg(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request, elem chans.Elem, ai int) (*chans.Msg, sched.Action, bool) {
	var v vmloop.Value
	var hb int64
	var exts []any
	switch elem {
	case chans.ElemI64:
		v = vmloop.I64(ex.ArgI64(ai))
	case chans.ElemF64:
		v = vmloop.F64(ex.ArgF64(ai))
	default:
		c, more, err := ex.ArgValueMore(ai)
		if more {
			return nil, sched.ActMore, false
		}
		if err != nil {
			var ti vmloop.TrapInfo
			if errors.As(err, &ti) && ti.Code == vmloop.TrapHeapLimit {
				// The copy out of the heap did not fit the engine's
				// budget: the sender is told, as for the message's charge.
				return nil, raise(ex, vmloop.Err(vmloop.ErrKindResource, fmt.Sprintf("%s: the message does not fit engine %q's memory limit: %s", req.Intr.Name, t.Engine().Name(), ti.Msg))), false
			}
			return nil, trap(ex, err), false
		}
		v, hb, exts = c.V, c.HostBytes, c.Exts
	}
	mem := ex.Memory()
	m, n, ok := chans.NewMsgSized(v, hb, mem)
	if !ok {
		return nil, raise(ex, vmloop.Err(vmloop.ErrKindResource, fmt.Sprintf("%s: a message of %d bytes exceeds engine %q's memory limit (%d of %d bytes in use; raise memoryBytes)",
			req.Intr.Name, n, t.Engine().Name(), mem.Used(), mem.Limit()))), false
	}
	if elem == chans.ElemRef {
		// Socket and file handles move to the receiver (chan_cargo.go).
		if e := b.loadCargo(t, req, m, exts); e != nil {
			m.Release()
			return nil, raise(ex, *e), false
		}
	}
	return m, sched.ActContinue, true
}

// chanSend: chan.send_* (waits while full).
func (b *Bus) chanSend(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	return b.send(t, ex, req, false)
}

// chanTrySend: chan.try_send_* (returns 1 sent, 0 full).
func (b *Bus) chanTrySend(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	return b.send(t, ex, req, true)
}

func (b *Bus) send(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request, try bool) sched.Action {
	c, a := chanArg(ex, req, true)
	if c == nil {
		return a
	}
	if c == b.drain {
		return raise(ex, drainSendErr(req))
	}
	m, a, ok := b.message(t, ex, req, c.Elem())
	if !ok {
		return a
	}
	if try {
		sent, err := c.Send(m, nil, t)
		if err != nil {
			m.Release()
			return raise(ex, closedErr(req, "send on a closed channel"))
		}
		if !sent {
			m.Release()
			return complete(ex, vmloop.I64(0), sched.ActContinue)
		}
		return complete(ex, vmloop.I64(1), sched.ActContinue)
	}
	// A waiting send: its row is timed, so callHost's timedWait took
	// time.timeout before this handler and arms it if the task suspends.
	sent, err := c.Send(m, func() chans.Waiter { return b.newWaiter(t) }, t)
	switch {
	case err != nil:
		m.Release()
		return raise(ex, closedErr(req, "send on a closed channel"))
	case sent:
		return completeVoid(ex, sched.ActContinue)
	}
	return sched.ActSuspend
}

func (b *Bus) chanSendResume(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	// A receiver's wake that lost to the timer may still be withdrawing
	// its result under the channel's mutex: wait it out before this task
	// can start another wait (Forget takes the mutex), and give the
	// unsent message's bytes back now.
	if a, ok := b.resumeTimedOut(t, ex, req, (*chans.Chan).Forget, "room in the channel (the value was not sent)"); ok {
		return a
	}
	v, _, _, ok := b.ctl.TakeHostResult(t)
	if !ok {
		return trap(ex, vmloop.TrapInfo{Code: vmloop.TrapIntrinsic, Msg: req.Intr.Name + ": resumed without a result"})
	}
	if _, _, closed := wokenWaiter(v); closed {
		return raise(ex, closedErr(req, "the channel was closed while the send waited (the value was not sent)"))
	}
	return completeVoid(ex, sched.ActContinue)
}

// chanRecv: chan.recv_* (waits while empty).
func (b *Bus) chanRecv(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	return b.recv(t, ex, req, false)
}

// chanTryRecv: chan.try_recv (an array of the message, or empty).
func (b *Bus) chanTryRecv(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	return b.recv(t, ex, req, true)
}

func (b *Bus) recv(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request, try bool) sched.Action {
	c, a := chanArg(ex, req, !try)
	if c == nil {
		return a
	}
	if m, ok := ex.ImportHeld().(*chans.Msg); ok {
		// The next step of the import of the message the task took: it
		// is the task's, and the request goes on with it (deliver).
		return b.deliverSteps(t, ex, req, c, m, vmloop.Void())
	}
	if try {
		m, err := c.Recv(nil, t)
		if err != nil {
			return raise(ex, closedErr(req, "the channel is closed and drained"))
		}
		return b.deliver(t, ex, req, c, m, true)
	}
	// A waiting receive: timed like a send (timedWait).
	m, err := c.Recv(func() chans.Waiter { return b.newWaiter(t) }, t)
	switch {
	case err != nil:
		return raise(ex, closedErr(req, "the channel is closed and drained"))
	case m != nil:
		return b.deliver(t, ex, req, c, m, false)
	}
	return sched.ActSuspend
}

func (b *Bus) chanRecvResume(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	if a, ok := b.resumeTimedOut(t, ex, req, (*chans.Chan).Sync, "a message (none was taken)"); ok { // as in chanSendResume
		return a
	}
	v, _, _, ok := b.ctl.TakeHostResult(t)
	if !ok {
		return trap(ex, vmloop.TrapInfo{Code: vmloop.TrapIntrinsic, Msg: req.Intr.Name + ": resumed without a result"})
	}
	m, c, closed := wokenWaiter(v)
	if closed {
		return raise(ex, closedErr(req, "the channel is closed and drained"))
	}
	return b.deliver(t, ex, req, c, m, false)
}

// deliver puts message m (nil: none, for try_recv) into the task's heap
// as the request's result (for try_recv, an array of it or empty). A message that does not fit the heap goes
// back to the head of the channel and a ResourceError is thrown: the
// receiver took nothing.
func (b *Bus) deliver(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request, c *chans.Chan, m *chans.Msg, try bool) sched.Action {
	v := vmloop.Void()
	if m != nil {
		v = m.Value()
	}
	if try {
		var elems []vmloop.Value
		if m != nil {
			elems = []vmloop.Value{m.Value()}
		}
		var err error
		if v, err = vmloop.Array(c.Elem().Kind(), elems...); err != nil {
			if m != nil {
				c.Requeue(m, t)
			}
			return trap(ex, err)
		}
	}
	return b.deliverSteps(t, ex, req, c, m, v)
}

// deliverSteps imports v, the result of a receive of m from c, into the
// task's heap in bounded steps (vmloop.Exec.CompleteIfRoomMoreHeld),
// charged to t: while steps remain it answers ActMore, and the request,
// dispatched again, finds the import under way (chanRecv) and goes on
// with it, never taking another message. m is the task's from the moment
// it took it: a task dropped before the import ends gives back what the
// import made with its heap, and m's charge (m.DropImport).
func (b *Bus) deliverSteps(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request, c *chans.Chan, m *chans.Msg, v vmloop.Value) sched.Action {
	var held vmloop.ImportHolder
	if m != nil {
		held = m
	}
	more, room, err := ex.CompleteIfRoomMoreHeld(v, held)
	if more {
		return sched.ActMore
	}
	if !room || err != nil {
		if m != nil {
			c.Requeue(m, t)
		}
		if !room {
			var ti vmloop.TrapInfo
			errors.As(err, &ti)
			return raise(ex, vmloop.Err(vmloop.ErrKindResource, fmt.Sprintf("%s: the message does not fit this task's heap (it stays in the channel): %s", req.Intr.Name, ti.Msg)))
		}
		return trap(ex, err)
	}
	if m != nil {
		b.takeCargo(t, m)
		m.Release()
		m.Recycle() // the value is in the heap: nothing names m any more
	}
	return sched.ActContinue
}

func (b *Bus) chanClose(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	c, a := chanArg(ex, req, false)
	if c == nil {
		return a
	}
	if c == b.drain {
		return raise(ex, vmloop.Err(vmloop.ErrKindError, req.Intr.Name+": the drain channel (chan.drain) is closed only by the drain"))
	}
	if err := c.Close(t); err != nil {
		return raise(ex, closedErr(req, "the channel is already closed"))
	}
	return completeVoid(ex, sched.ActContinue)
}

// chanLen: chan.len, the messages queued.
func (b *Bus) chanLen(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	c, a := chanArg(ex, req, false)
	if c == nil {
		return a
	}
	return complete(ex, vmloop.I64(c.Len()), sched.ActContinue)
}

// chanCap: chan.cap, the capacity.
func (b *Bus) chanCap(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	c, a := chanArg(ex, req, false)
	if c == nil {
		return a
	}
	return complete(ex, vmloop.I64(c.Cap()), sched.ActContinue)
}

// drainSendErr is the error of a send on the drain channel.
func drainSendErr(req *vmloop.Request) vmloop.Value {
	return vmloop.Err(vmloop.ErrKindError, req.Intr.Name+": nothing is sent on the drain channel (chan.drain): it only closes when the drain begins")
}

// chanDrain: chan.drain, the channel the drain closes (drain.go).
func (b *Bus) chanDrain(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	return complete(ex, vmloop.Ext(vmloop.KindExt, b.drain), sched.ActContinue)
}
