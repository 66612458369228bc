package bus

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/iosys"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// Sockets as select cases (ABI 1.6): sel.readable sel, conn and
// sel.acceptable sel, listener add a case that fires when a net.read of
// the connection (or a net.accept of the listener) would not wait — bytes
// or a connection are there, the peer ended the stream, or the socket
// failed — and performs nothing: the program then reads (or accepts),
// which returns at once. So a case that loses consumed nothing, on every
// backend, and one that wins lost nothing either: no read is ever
// started by a select, so there is none to undo.
//
// A wait polls the socket without waiting (poll(2), with the descriptor
// held open) as it polls its other cases; when no case is ready it parks
// an evpoll.Poll of the socket on the backend of the worker running the
// task, under the select's one host wait (sched.Control.SubmitPoll): the
// poll's completion is a wake of case i, decided against the other cases,
// the deadline and a cancel by the wait word's one compare-and-swap. The
// polls of a wait that ended otherwise are cancelled when the task is next
// dispatched, and their late completions are dropped (no descriptor or
// operation outlives the wait: a cancelled, timed-out or drained select
// leaves none behind).
//
// A case that cannot be watched — its handle was closed or passed on, the
// engine's inFlightIO limit is reached — fires at once, so that the
// read or accept after it reports why.

// ioCase is a socket's readiness as a select case (chans.Other). Its
// Lock is empty: only the select's owner touches the socket, and the
// poll's wake goes through the wait word.
type ioCase struct {
	b *Bus
	h *ioHandle
	o *selObj
	// op is the Poll of h's descriptor, made once and never changed: a
	// backend only reads a Poll, so it is submitted again by every wait
	// that parks, an earlier submission possibly still in flight.
	op evpoll.Op
}

// Deferred: a poll of the socket is a system call, and a parked wait's
// poll operation finds the socket ready by itself (chans.Deferred).
func (c *ioCase) Deferred() {}

func (c *ioCase) Lock()        {}
func (c *ioCase) Unlock()      {}
func (c *ioCase) Key() uintptr { return uintptr(unsafe.Pointer(c)) }

// PollLocked reports whether the socket is ready now (consuming nothing);
// a socket that cannot be watched is ready: the operation after the case
// reports why.
func (c *ioCase) PollLocked() bool {
	if owns, _ := c.h.fd.OwnedBy(c.o.t); !owns {
		return true
	}
	ready := true
	if err := c.b.ctl.UseFD(c.h.fd, func(num int) error {
		var err error
		ready, err = iosys.PollNow(num)
		return err
	}); err != nil {
		return true
	}
	return ready
}

// ParkLocked watches the socket for the parked wait as case i; a socket
// the task no longer owns (passed on, closed) or that cannot be watched
// fires the case at once.
func (c *ioCase) ParkLocked(i int) {
	owns, _ := c.h.fd.OwnedBy(c.o.t)
	if !owns || c.b.ctl.SubmitPoll(c.o.t, &c.op, c.h.fd, int64(i)<<1) != nil {
		c.b.ctl.CompleteHost(c.o.tok, vmloop.I64(int64(i)<<1), nil, nil)
	}
}

// selReadable: sel.readable sel, conn.
func (b *Bus) selReadable(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	return b.selAddIO(t, ex, req, "conn")
}

// selAcceptable: sel.acceptable sel, listener.
func (b *Bus) selAcceptable(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	return b.selAddIO(t, ex, req, "listener")
}

// selAddIO adds the case of sel.readable or sel.acceptable: argument 1
// is a handle of kind want, and must be the caller's own.
func (b *Bus) selAddIO(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request, want string) sched.Action {
	o, a := selArg(t, ex, req)
	if o == nil {
		return a
	}
	obj, err := ex.ArgObj(1, vmloop.KindExt)
	if err != nil {
		return trap(ex, err)
	}
	h, ok := obj.(*ioHandle)
	if !ok || h.kind != want {
		return trap(ex, vmloop.TrapInfo{Code: vmloop.TrapHandle, Msg: fmt.Sprintf("%s: argument 2 is %s, want a %s", req.Intr.Name, extName(obj), want)})
	}
	if owns, owner := h.fd.OwnedBy(t); !owns {
		if owner != 0 {
			return raise(ex, vmloop.Err(vmloop.ErrKindIO, fmt.Sprintf("%s: %s belongs to task %d, to which it was passed; only its owner may use it", req.Intr.Name, h, owner)))
		}
		return raise(ex, vmloop.Err(vmloop.ErrKindIO, fmt.Sprintf("%s: %s is closed", req.Intr.Name, h)))
	}
	if err := b.ctl.UseFD(h.fd, func(num int) error {
		_, err := iosys.PollNow(num)
		return err
	}); err != nil {
		if errors.Is(err, sched.ErrFDClosed) {
			return raise(ex, vmloop.Err(vmloop.ErrKindIO, fmt.Sprintf("%s: %s is closed", req.Intr.Name, h)))
		}
		return raise(ex, ioErr(req, err))
	}
	o.t = t
	c := &ioCase{b: b, h: h, o: o, op: evpoll.Op{Kind: evpoll.Poll, Fd: h.fd.Num()}}
	return complete(ex, vmloop.I64(int64(o.s.AddOther(c))), sched.ActContinue)
}

// joinCase is a task's end as a select case (chans.Other, sel.join): it
// fires once the task has completed, and takes nothing (the outcome stays
// for task.join_* and task.outcome, which then return at once). Its Lock
// is empty: the task's own mutex is taken only to register the case
// (ParkJoin), after the select's locks, as a wake takes a waiter's.
type joinCase struct {
	b      *Bus
	target *sched.Task
	o      *selObj
}

func (c *joinCase) Lock()            {}
func (c *joinCase) Unlock()          {}
func (c *joinCase) Key() uintptr     { return uintptr(unsafe.Pointer(c)) }
func (c *joinCase) PollLocked() bool { return c.target.State() == sched.Completed }

// ParkLocked registers the parked wait as a watcher of the task's end.
func (c *joinCase) ParkLocked(i int) {
	if c.b.ctl.ParkJoin(c.o.tok, c.target, int64(i)<<1) {
		c.b.ctl.CompleteHost(c.o.tok, vmloop.I64(int64(i)<<1), nil, nil)
	}
}

// selAddJoin: sel.join sel, task.
func (b *Bus) selAddJoin(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	o, a := selArg(t, ex, req)
	if o == nil {
		return a
	}
	obj, err := ex.ArgObj(1, vmloop.KindTask)
	if err != nil {
		return trap(ex, err)
	}
	target := obj.(*sched.Task)
	if target == t {
		return raise(ex, vmloop.Err(vmloop.ErrKindError, req.Intr.Name+": a task cannot wait for its own end"))
	}
	c := &joinCase{b: b, target: target, o: o}
	return complete(ex, vmloop.I64(int64(o.s.AddOther(c))), sched.ActContinue)
}
