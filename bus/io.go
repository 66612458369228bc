package bus

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// The socket and file intrinsics of ABI 1.2 (net.*, file.*). Each one that
// waits submits one operation to the completion backend of the worker
// running the task and suspends the task (no async colouring, §3.4); the
// completion resumes it with the syscall's result. Failures throw a
// catchable IoError naming the operation and the errno; the engine's
// inFlightIO limit throws a ResourceError. A time.timeout before a call
// that may wait (its row's timed) bounds its wait: the command table runs
// it under timedWait, so a call that completes at once (inline, or with
// an error) drops the timeout. A timed-out operation did nothing and throws
// TimeoutError, except a write that had sent part of its bytes, which
// returns that count (writeSent). The calling engine needs CapIO. Each
// intrinsic is one row of io_table.go (its op kind, argument handle,
// timeout rule, start, done, failed and abandon); this file holds what
// the rows share: the handle, submitting, the common resume and abandon.

// ioHandle is the object behind a listener, connection or file value
// (KindExt). Its descriptor (a sched.FD) is closed by net.close /
// file.close, or when its owner task ends: a handle belongs to the task
// that made it, or to the task it was last passed to as a spawn argument,
// so a task that fails, traps or is cancelled leaks no descriptor. The
// scheduler keeps the ownership record (it moves with the handle) and
// closes a descriptor only once no operation names it (sched/fd.go).
type ioHandle struct {
	kind string // "listener", "conn" or "file"
	fd   *sched.FD
	// ready: a select's sel.readable case fired for this connection, so
	// its next net.read tries a non-blocking recv before it submits one.
	// Only the owner task touches it.
	ready bool
}

// newHandle returns a handle for fd (owned by the task that made fd), as a value.
func newHandle(kind string, fd *sched.FD) vmloop.Value {
	return vmloop.Ext(vmloop.KindExt, &ioHandle{kind: kind, fd: fd})
}

// passHandles gives the child the handles among a spawn's arguments.
func (b *Bus) passHandles(child *sched.Task, args []vmloop.Value) {
	for _, a := range args {
		if a.Kind() == vmloop.KindExt {
			b.passHandle(child, a.Obj())
		}
	}
}

// passHandle gives the child obj if it is a socket or file handle, unless
// it is in a message (a stale copy of a handle sent: the message's
// receiver will own it).
func (b *Bus) passHandle(child *sched.Task, obj any) {
	if h, ok := obj.(*ioHandle); ok && !h.fd.Detached() {
		b.ctl.PassFD(child, h.fd)
	}
}

func (h *ioHandle) String() string { return fmt.Sprintf("%s(fd %d)", h.kind, h.fd.Num()) }

// submitIO submits op on f for t; the caller's timedWait arms the
// timeout, if any, once the task suspends.
func (b *Bus) submitIO(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request, op *evpoll.Op, f *sched.FD) sched.Action {
	return b.submitted(ex, req, f, b.ctl.SubmitIO(t, op, f))
}

// submitted is the action for the result err of submitting an operation
// on f: suspend, or throw why it could not be submitted.
func (b *Bus) submitted(ex *vmloop.Exec, req *vmloop.Request, f *sched.FD, err error) sched.Action {
	switch {
	case err == nil:
		return sched.ActSuspend
	case errors.Is(err, sched.ErrFDClosed):
		return raise(ex, vmloop.Err(vmloop.ErrKindIO, fmt.Sprintf("%s: fd %d is closed", req.Intr.Name, f.Num())))
	default:
		return raise(ex, ioErr(req, err))
	}
}

// writeRest submits the rest of a short write (op, its buffer cut to
// what is left) on f. A write under a timeout keeps its deadline: the
// rest's operation is bounded by the instant the first one was armed
// for, so the timeout covers the whole write, and a write found at or
// past it ends now, reporting what it sent.
func (b *Bus) writeRest(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request, op *evpoll.Op, f *sched.FD) sched.Action {
	deadline, has := b.ctl.WaitDeadline(t)
	if !has {
		return b.submitIO(t, ex, req, op, f)
	}
	if b.s.Now() >= deadline {
		return complete(ex, vmloop.I64(writeSent(ex, op)), sched.ActContinue)
	}
	if err := b.ctl.ReserveTimer(t); err != nil {
		return raise(ex, reqError(req, err, vmloop.ErrKindError))
	}
	return b.endWaitAt(t, deadline, b.submitIO(t, ex, req, op, f))
}

// writeSent is what a write (net.write, file.write) whose operation op
// is outstanding or just ended has sent so far: the bytes it was asked
// for less op's buffer (an inline send and earlier short writes took
// the difference).
func writeSent(ex *vmloop.Exec, op *evpoll.Op) int64 {
	return ex.ArgI64(3) - int64(len(op.Buf))
}

// ioResume completes a net.* or file.* request of a woken task by its
// row: the row's done for a success; for a failure the row's failed
// first, then a TimeoutError or an IoError naming the errno.
func (b *Bus) ioResume(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	c := newIOCall(t, ex, req)
	r := b.ctl.TakeIO(t)
	if !r.Done {
		return trap(ex, vmloop.TrapInfo{Code: vmloop.TrapIntrinsic, Msg: req.Intr.Name + ": resumed without a completion"})
	}
	if !r.TimedOut && r.Res >= 0 {
		return c.row.done(b, c, r)
	}
	if c.row.failed != nil {
		if a, ok := c.row.failed(b, c, r); ok {
			return a
		}
	}
	if r.TimedOut {
		// The cancel won: the operation did nothing (no byte read or
		// written, no connection taken).
		return timedOut(ex, req, "the "+r.Op.Kind.String()+" operation")
	}
	errno := syscall.Errno(-r.Res)
	if errno == syscall.ECANCELED && r.FD != nil && r.FD.Closing() {
		return raise(ex, vmloop.Err(vmloop.ErrKindIO, fmt.Sprintf("%s: fd %d was closed while the %s waited", req.Intr.Name, r.FD.Num(), r.Op.Kind)))
	}
	return raise(ex, vmloop.Err(vmloop.ErrKindIO, fmt.Sprintf("%s: %s (errno %d)", req.Intr.Name, errno.Error(), int(errno))))
}

// ioAbandon takes the completion of t's net.* or file.* request, whose
// task was cancelled before it resumed, and lets the row's abandon
// release what it produced.
func (b *Bus) ioAbandon(t *sched.Task, req *vmloop.Request, _ bool) {
	r := b.ctl.TakeIO(t)
	if op := ioOpOf(req.Intr.ID); r.Done && op != nil && op.abandon != nil {
		op.abandon(b, r)
	}
}

func strArg(ex *vmloop.Exec, i int) (string, sched.Action) {
	obj, err := ex.ArgObj(i, vmloop.KindString)
	if err != nil {
		return "", trap(ex, err)
	}
	return obj.(string), sched.ActContinue
}

// handleArg returns argument 0 as the handle want names (an ioOp's
// arg); closing: a close, for which a listener is a conn too.
func handleArg(ex *vmloop.Exec, req *vmloop.Request, want string, closing bool) (*ioHandle, sched.Action) {
	obj, err := ex.ArgObj(0, vmloop.KindExt)
	if err != nil {
		return nil, trap(ex, err)
	}
	h, ok := obj.(*ioHandle)
	socket := h != nil && (h.kind == "conn" || h.kind == "listener")
	if !ok || (h.kind != want && !(want == "socket" && socket) && !(want == "conn" && h.kind == "listener" && closing)) {
		return nil, trap(ex, vmloop.TrapInfo{Code: vmloop.TrapHandle, Msg: fmt.Sprintf("%s: argument is %s, want a %s", req.Intr.Name, extName(obj), want)})
	}
	return h, sched.ActContinue
}

func ioErr(req *vmloop.Request, err error) vmloop.Value { return reqError(req, err, vmloop.ErrKindIO) }
