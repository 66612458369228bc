package bus

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/jadevm/jade/evpoll"
	"github.com/jadevm/jade/iosys"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// The socket and file intrinsics of ABI 1.2 (net.*, file.*). Each one that
// waits submits one operation to the completion backend of the worker
// running the task and suspends the task (no async colouring, §3.4); the
// completion resumes it with the syscall's result. Failures throw a
// catchable IoError naming the operation and the errno; the engine's
// inFlightIO limit throws a ResourceError. A time.timeout before a call
// that may wait (ioTimed) bounds its wait: the command table runs it
// under timedWait, so a call that completes at once (inline, or with an
// error) drops the timeout. A timed-out operation did nothing and throws
// TimeoutError, except a write that had sent part of its bytes, which
// returns that count (writeSent). The calling engine needs CapIO.

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

// ioTimed reports whether I/O intrinsic id is a wait that time.timeout
// bounds: one that may suspend for its peer or its file (net.close waits
// only for the cancel of other operations, and takes no timeout).
func ioTimed(id vmloop.IntrinsicID) bool {
	switch id {
	case vmloop.IntrNetAccept, vmloop.IntrNetConnect, vmloop.IntrNetRead, vmloop.IntrNetReadN, vmloop.IntrNetWrite,
		vmloop.IntrFileOpen, vmloop.IntrFileRead, vmloop.IntrFileReadN, vmloop.IntrFileWrite:
		return true
	}
	return false
}

// isIO reports whether id is a socket or file intrinsic, by its row's
// family (vmloop.Family), not by a range of IDs.
func isIO(id vmloop.IntrinsicID) bool { return vmloop.FamilyOf(id).IO() }

// ioIntrinsic handles a net.* or file.* request; ok is false for others.
func (b *Bus) ioIntrinsic(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) (a sched.Action, ok bool) {
	id := req.Intr.ID
	if !isIO(id) {
		return 0, false
	}
	// CapIO was checked by the command table (authorize).
	switch id {
	case vmloop.IntrNetListen:
		return b.listen(t, ex, req, false), true
	case vmloop.IntrNetConnect:
		addr, a := strArg(ex, 0)
		if a != sched.ActContinue {
			return a, true
		}
		fd, ap, err := iosys.Socket(b.ctl.IOName(t), addr)
		if err != nil {
			return raise(ex, ioErr(req, err)), true
		}
		// The socket has no owner until the connect succeeds: a failed or
		// dropped connect closes it.
		return b.submitIO(t, ex, req, b.ctl.IOOp(t, evpoll.Op{Kind: evpoll.Connect, Fd: fd, Addr: ap}), b.ctl.NewFD(nil, fd)), true
	case vmloop.IntrFileOpen:
		path, a := strArg(ex, 0)
		if a != sched.ActContinue {
			return a, true
		}
		fl := ex.ArgI64(1)
		if fl < 0 || fl&^63 != 0 || fl&3 == 3 {
			return raise(ex, vmloop.Err(vmloop.ErrKindError, fmt.Sprintf("file.open: flags %d: want 0 read-only, 1 write-only or 2 read-write, plus 4 create, 8 truncate, 16 append, 32 exclusive", fl))), true
		}
		return b.submitIO(t, ex, req, b.ctl.IOOp(t, evpoll.Op{Kind: evpoll.Open, Path: path, OpenFlags: evpoll.OpenFlag(fl), Mode: 0o644}), nil), true
	}
	if id == vmloop.IntrNetListenOpts {
		return b.listenOpts(t, ex, req), true
	}
	want := "conn"
	switch id {
	case vmloop.IntrNetAccept:
		want = "listener"
	case vmloop.IntrFileRead, vmloop.IntrFileWrite, vmloop.IntrFileClose, vmloop.IntrFileReadN:
		want = "file"
	case vmloop.IntrNetLocalAddr:
		want = "socket"
	}
	h, a := handleArg(ex, req, want)
	if h == nil {
		return a, true
	}
	if stale, why := staleHandle(t, h, id == vmloop.IntrNetClose || id == vmloop.IntrFileClose); stale {
		// Passed on at spawn or in a message: this copy is stale (a use
		// would race the new owner's, and its end closes the descriptor).
		return raise(ex, vmloop.Err(vmloop.ErrKindIO, req.Intr.Name+": "+why+"; only its owner may use it")), true
	}
	if id == vmloop.IntrNetClose || id == vmloop.IntrFileClose {
		// Idempotent, and never leaks the descriptor: with operations
		// still naming it (another task's read), they are cancelled and
		// the last one's completion closes it; the caller goes on.
		op := b.ctl.IOOp(t, evpoll.Op{})
		if b.ctl.SubmitClose(t, h.fd, op) {
			return sched.ActSuspend, true
		}
		return complete(ex, vmloop.Void(), sched.ActContinue), true
	}
	if a, ok := b.serverIO(t, ex, req, h); ok {
		return a, true
	}
	fd := h.fd.Num()
	switch id {
	case vmloop.IntrNetAccept:
		if a, ok := b.acceptNow(t, ex, h); ok {
			return a, true
		}
		return b.submitIO(t, ex, req, b.ctl.IOOp(t, evpoll.Op{Kind: evpoll.Accept, Fd: fd}), h.fd), true
	case vmloop.IntrNetRead, vmloop.IntrFileRead, vmloop.IntrNetReadN, vmloop.IntrFileReadN:
		buf, err := ex.ArgBytes(1)
		if err != nil {
			return trap(ex, err), true
		}
		off := ex.ArgI64(2)
		max := int64(len(buf)) - off
		if id == vmloop.IntrNetReadN || id == vmloop.IntrFileReadN {
			max = ex.ArgI64(3)
		}
		if off < 0 || off > int64(len(buf)) || max < 1 || max > int64(len(buf))-off {
			// An IoError, so that a server's one handler for a failed read
			// sees a request too long for its buffer as well.
			return raise(ex, vmloop.Err(vmloop.ErrKindIO, fmt.Sprintf("%s: no room: range [%d, %d+%d) in a buffer of %d bytes (want 0 <= offset, 1 <= max, offset+max <= length)", req.Intr.Name, off, off, max, len(buf)))), true
		}
		k := evpoll.Recv
		if id == vmloop.IntrFileRead || id == vmloop.IntrFileReadN {
			k = evpoll.Read
		} else if h.ready {
			h.ready = false
			if n, ok := b.recvNow(h, buf[off:off+max]); ok {
				return complete(ex, vmloop.I64(int64(n)), sched.ActContinue), true
			}
		}
		return b.submitIO(t, ex, req, b.ctl.IOOp(t, evpoll.Op{Kind: k, Fd: fd, Buf: buf[off : off+max], Offset: -1}), h.fd), true
	default: // write
		buf, err := ex.ArgBytes(1)
		if err != nil {
			return trap(ex, err), true
		}
		off, n := ex.ArgI64(2), ex.ArgI64(3)
		if off < 0 || n < 0 || off > int64(len(buf)) || n > int64(len(buf))-off {
			return raise(ex, vmloop.Err(vmloop.ErrKindError, fmt.Sprintf("%s: range [%d, %d+%d) outside a buffer of %d bytes", req.Intr.Name, off, off, n, len(buf)))), true
		}
		if n == 0 {
			return complete(ex, vmloop.I64(0), sched.ActContinue), true
		}
		k := evpoll.Send
		if id == vmloop.IntrFileWrite {
			k = evpoll.Write
		} else if sent := b.sendNow(h, buf[off:off+n]); int64(sent) == n {
			return complete(ex, vmloop.I64(n), sched.ActContinue), true
		} else {
			off, n = off+int64(sent), n-int64(sent) // submit the rest
		}
		return b.submitIO(t, ex, req, b.ctl.IOOp(t, evpoll.Op{Kind: k, Fd: fd, Buf: buf[off : off+n], Offset: -1}), h.fd), true
	}
}

// submitIO submits op on f for t; the caller's timedWait arms the
// timeout, if any, once the task suspends. A connect's f is closed when
// the op cannot be submitted.
func (b *Bus) submitIO(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request, op *evpoll.Op, f *sched.FD) sched.Action {
	err := b.ctl.SubmitIO(t, op, f)
	if err == nil {
		return sched.ActSuspend
	}
	var a sched.Action
	if errors.Is(err, sched.ErrFDClosed) && op.Kind == evpoll.Accept && b.listeners.closedByDrain(f) {
		a = b.drainedAccept(t, ex, req, f, "the listener was closed")
	} else if errors.Is(err, sched.ErrFDClosed) {
		a = raise(ex, vmloop.Err(vmloop.ErrKindIO, fmt.Sprintf("%s: fd %d is closed", req.Intr.Name, f.Num())))
	} else {
		a = raise(ex, ioErr(req, err))
	}
	if op.Kind == evpoll.Connect {
		b.ctl.CloseFD(f) // no backend saw the socket
	}
	return a
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

// ioResume completes a net.* or file.* request of a woken task.
func (b *Bus) ioResume(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) (a sched.Action, ok bool) {
	if !isIO(req.Intr.ID) {
		return 0, false
	}
	r := b.ctl.TakeIO(t)
	op, res := r.Op, r.Res
	if !r.Done {
		return trap(ex, vmloop.TrapInfo{Code: vmloop.TrapIntrinsic, Msg: req.Intr.Name + ": resumed without a completion"}), true
	}
	if r.TimedOut || res < 0 {
		if op.Kind == evpoll.Connect {
			b.ctl.CloseFD(r.FD)
		}
		if r.TimedOut {
			// The cancel won: the operation did nothing (no byte read or
			// written, no connection taken). A write that had sent part
			// of its bytes before (inline, or by short writes) returns
			// that count, as Go's Write returns n with its deadline
			// error: a TimeoutError would make the program send them
			// again.
			if op.Kind == evpoll.Send || op.Kind == evpoll.Write {
				if sent := writeSent(ex, op); sent > 0 {
					return complete(ex, vmloop.I64(sent), sched.ActContinue), true
				}
			}
			return timedOut(ex, req, "the "+op.Kind.String()+" operation"), true
		}
		errno := syscall.Errno(-res)
		if errno == syscall.ECANCELED && op.Kind == evpoll.Accept && b.listeners.closedByDrain(r.FD) {
			return b.drainedAccept(t, ex, req, r.FD, "the listener was closed while the accept waited"), true
		}
		if errno == syscall.ECANCELED && r.FD != nil && r.FD.Closing() {
			return raise(ex, vmloop.Err(vmloop.ErrKindIO, fmt.Sprintf("%s: fd %d was closed while the %s waited", req.Intr.Name, r.FD.Num(), op.Kind))), true
		}
		return raise(ex, vmloop.Err(vmloop.ErrKindIO, fmt.Sprintf("%s: %s (errno %d)", req.Intr.Name, errno.Error(), int(errno)))), true
	}
	switch op.Kind {
	case evpoll.Accept:
		iosys.Accepted(int(res))
		return complete(ex, newHandle("conn", b.ctl.NewFD(t, int(res))), sched.ActContinue), true
	case evpoll.Connect:
		b.ctl.PassFD(t, r.FD)
		return complete(ex, newHandle("conn", r.FD), sched.ActContinue), true
	case evpoll.Open:
		return complete(ex, newHandle("file", b.ctl.NewFD(t, int(res))), sched.ActContinue), true
	case evpoll.Send, evpoll.Write:
		if int(res) < len(op.Buf) {
			if res == 0 {
				return raise(ex, vmloop.Err(vmloop.ErrKindIO, req.Intr.Name+": the peer accepted no bytes")), true
			}
			op.Buf = op.Buf[res:] // a short write: send the rest
			return b.writeRest(t, ex, req, op, r.FD), true
		}
		return complete(ex, vmloop.I64(ex.ArgI64(3)), sched.ActContinue), true
	case evpoll.Close:
		return complete(ex, vmloop.Void(), sched.ActContinue), true
	}
	return complete(ex, vmloop.I64(int64(res)), sched.ActContinue), true // reads
}

// ioAbandon releases what a completed operation handed to a task that was
// cancelled before it resumed: the descriptor an accept or open produced,
// the socket of a connect.
func (b *Bus) ioAbandon(t *sched.Task) {
	r := b.ctl.TakeIO(t)
	if !r.Done {
		return
	}
	switch r.Op.Kind {
	case evpoll.Accept, evpoll.Open:
		if r.Res >= 0 && !r.TimedOut {
			b.ctl.CloseFD(b.ctl.NewFD(nil, int(r.Res)))
		}
	case evpoll.Connect:
		b.ctl.CloseFD(r.FD)
	}
}

func strArg(ex *vmloop.Exec, i int) (string, sched.Action) {
	obj, err := ex.ArgObj(i, vmloop.KindString)
	if err != nil {
		return "", trap(ex, err)
	}
	return obj.(string), sched.ActContinue
}

func handleArg(ex *vmloop.Exec, req *vmloop.Request, want string) (*ioHandle, sched.Action) {
	obj, err := ex.ArgObj(0, vmloop.KindExt)
	if err != nil {
		return nil, trap(ex, err)
	}
	h, ok := obj.(*ioHandle)
	socket := h != nil && (h.kind == "conn" || h.kind == "listener")
	if !ok || (h.kind != want && !(want == "socket" && socket) && !(want == "conn" && h.kind == "listener" && req.Intr.ID == vmloop.IntrNetClose)) {
		return nil, trap(ex, vmloop.TrapInfo{Code: vmloop.TrapHandle, Msg: fmt.Sprintf("%s: argument is %s, want a %s", req.Intr.Name, extName(obj), want)})
	}
	return h, sched.ActContinue
}

func ioErr(req *vmloop.Request, err error) vmloop.Value { return reqError(req, err, vmloop.ErrKindIO) }
