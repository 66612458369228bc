package bus

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/iosys"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// The functions of the I/O rows (io_table.go) that wait: accept, connect,
// open, read, write and close. Those that never wait are in io_server.go.

// connect is net.connect addr. The socket has no owner until the connect
// succeeds: a failed or dropped connect closes it.
func (b *Bus) connect(c ioCall) sched.Action {
	addr, a := strArg(c.ex, 0)
	if a != sched.ActContinue {
		return a
	}
	fd, ap, err := iosys.Socket(b.ctl.IOName(c.t), addr)
	if err != nil {
		return raise(c.ex, ioErr(c.req, err))
	}
	f := b.ctl.NewFD(nil, fd)
	if a := b.submitIO(c.t, c.ex, c.req, b.ctl.IOOp(c.t, evpoll.Op{Kind: c.row.kind, Fd: fd, Addr: ap}), f); a != sched.ActSuspend {
		b.ctl.CloseFD(f) // no backend saw the socket
		return a
	}
	return sched.ActSuspend
}

// connectDone gives the connected socket to the task.
func (b *Bus) connectDone(c ioCall, r sched.IOResult) sched.Action {
	b.ctl.PassFD(c.t, r.FD)
	return complete(c.ex, newHandle("conn", r.FD), sched.ActContinue)
}

// connectFailed closes the socket of a failed connect.
func (b *Bus) connectFailed(c ioCall, r sched.IOResult) (sched.Action, bool) {
	b.ctl.CloseFD(r.FD)
	return 0, false
}

// connectAbandon closes the socket of a connect whose task will not run.
func (b *Bus) connectAbandon(r sched.IOResult) { b.ctl.CloseFD(r.FD) }

// open is file.open path, flags.
func (b *Bus) open(c ioCall) sched.Action {
	path, a := strArg(c.ex, 0)
	if a != sched.ActContinue {
		return a
	}
	fl := c.ex.ArgI64(1)
	if fl < 0 || fl&^63 != 0 || fl&3 == 3 {
		return raise(c.ex, vmloop.Err(vmloop.ErrKindError, fmt.Sprintf("file.open: flags %d: want 0 read-only, 1 write-only or 2 read-write, plus 4 create, 8 truncate, 16 append, 32 exclusive", fl)))
	}
	return b.submitIO(c.t, c.ex, c.req, b.ctl.IOOp(c.t, evpoll.Op{Kind: c.row.kind, Path: path, OpenFlags: evpoll.OpenFlag(fl), Mode: 0o644}), nil)
}

// openDone gives the opened file to the task.
func (b *Bus) openDone(c ioCall, r sched.IOResult) sched.Action {
	return complete(c.ex, newHandle("file", b.ctl.NewFD(c.t, int(r.Res))), sched.ActContinue)
}

// closeProduced closes the descriptor an accept or open produced for a
// task that will not run.
func (b *Bus) closeProduced(r sched.IOResult) {
	if r.Res >= 0 && !r.TimedOut {
		b.ctl.CloseFD(b.ctl.NewFD(nil, int(r.Res)))
	}
}

// accept is net.accept listener: a connection already queued is taken
// at once; else it submits an accept, unless a drain closed the listener.
func (b *Bus) accept(c ioCall) sched.Action {
	if a, ok := b.acceptNow(c.t, c.ex, c.h); ok {
		return a
	}
	err := b.ctl.SubmitIO(c.t, b.ctl.IOOp(c.t, evpoll.Op{Kind: c.row.kind, Fd: c.h.fd.Num()}), c.h.fd)
	if errors.Is(err, sched.ErrFDClosed) && b.listeners.closedByDrain(c.h.fd) {
		return b.drainedAccept(c.t, c.ex, c.req, c.h.fd, "the listener was closed")
	}
	return b.submitted(c.ex, c.req, c.h.fd, err)
}

// acceptDone gives the accepted connection to the task.
func (b *Bus) acceptDone(c ioCall, r sched.IOResult) sched.Action {
	iosys.Accepted(int(r.Res))
	return complete(c.ex, newHandle("conn", b.ctl.NewFD(c.t, int(r.Res))), sched.ActContinue)
}

// acceptFailed: an accept cancelled because a drain closed its listener.
func (b *Bus) acceptFailed(c ioCall, r sched.IOResult) (sched.Action, bool) {
	if !r.TimedOut && syscall.Errno(-r.Res) == syscall.ECANCELED && b.listeners.closedByDrain(r.FD) {
		return b.drainedAccept(c.t, c.ex, c.req, r.FD, "the listener was closed while the accept waited"), true
	}
	return 0, false
}

// netRead, netReadN, fileRead and fileReadN are net.read, net.read_n,
// file.read and file.read_n h, buf, off (, max).
func (b *Bus) netRead(c ioCall) sched.Action   { return b.read(c, false, true) }
func (b *Bus) netReadN(c ioCall) sched.Action  { return b.read(c, true, true) }
func (b *Bus) fileRead(c ioCall) sched.Action  { return b.read(c, false, false) }
func (b *Bus) fileReadN(c ioCall) sched.Action { return b.read(c, true, false) }

// read reads into buf (argument 1) from offset argument 2, at most max
// bytes (argument 3) with withMax, else the rest of buf. A socket a
// select found readable tries a non-blocking recv first.
func (b *Bus) read(c ioCall, withMax, socket bool) sched.Action {
	buf, err := c.ex.ArgBytes(1)
	if err != nil {
		return trap(c.ex, err)
	}
	off := c.ex.ArgI64(2)
	max := int64(len(buf)) - off
	if withMax {
		max = c.ex.ArgI64(3)
	}
	if off < 0 || off > int64(len(buf)) || max < 1 || max > int64(len(buf))-off {
		// An IoError, so that a server's one handler for a failed read
		// sees a request too long for its buffer as well.
		return raise(c.ex, vmloop.Err(vmloop.ErrKindIO, fmt.Sprintf("%s: no room: range [%d, %d+%d) in a buffer of %d bytes (want 0 <= offset, 1 <= max, offset+max <= length)", c.req.Intr.Name, off, off, max, len(buf))))
	}
	if socket && c.h.ready {
		c.h.ready = false
		if n, ok := b.recvNow(c.h, buf[off:off+max]); ok {
			return complete(c.ex, vmloop.I64(int64(n)), sched.ActContinue)
		}
	}
	return b.submitIO(c.t, c.ex, c.req, b.ctl.IOOp(c.t, evpoll.Op{Kind: c.row.kind, Fd: c.h.fd.Num(), Buf: buf[off : off+max], Offset: -1}), c.h.fd)
}

// readDone returns the bytes read (0: end of stream).
func (b *Bus) readDone(c ioCall, r sched.IOResult) sched.Action {
	return complete(c.ex, vmloop.I64(int64(r.Res)), sched.ActContinue)
}

// netWrite and fileWrite are net.write and file.write h, buf, off, n.
func (b *Bus) netWrite(c ioCall) sched.Action  { return b.write(c, true) }
func (b *Bus) fileWrite(c ioCall) sched.Action { return b.write(c, false) }

// write writes n bytes of buf from off. A socket tries a non-blocking
// send first and submits the rest.
func (b *Bus) write(c ioCall, socket bool) sched.Action {
	buf, err := c.ex.ArgBytes(1)
	if err != nil {
		return trap(c.ex, err)
	}
	off, n := c.ex.ArgI64(2), c.ex.ArgI64(3)
	if off < 0 || n < 0 || off > int64(len(buf)) || n > int64(len(buf))-off {
		return raise(c.ex, vmloop.Err(vmloop.ErrKindError, fmt.Sprintf("%s: range [%d, %d+%d) outside a buffer of %d bytes", c.req.Intr.Name, off, off, n, len(buf))))
	}
	if n == 0 {
		return complete(c.ex, vmloop.I64(0), sched.ActContinue)
	}
	if socket {
		sent := b.sendNow(c.h, buf[off:off+n])
		if int64(sent) == n {
			return complete(c.ex, vmloop.I64(n), sched.ActContinue)
		}
		off, n = off+int64(sent), n-int64(sent) // submit the rest
	}
	return b.submitIO(c.t, c.ex, c.req, b.ctl.IOOp(c.t, evpoll.Op{Kind: c.row.kind, Fd: c.h.fd.Num(), Buf: buf[off : off+n], Offset: -1}), c.h.fd)
}

// writeDone returns the bytes asked for once all are written; a short
// write submits the rest.
func (b *Bus) writeDone(c ioCall, r sched.IOResult) sched.Action {
	if int(r.Res) < len(r.Op.Buf) {
		if r.Res == 0 {
			return raise(c.ex, vmloop.Err(vmloop.ErrKindIO, c.req.Intr.Name+": the peer accepted no bytes"))
		}
		r.Op.Buf = r.Op.Buf[r.Res:] // a short write: send the rest
		return b.writeRest(c.t, c.ex, c.req, r.Op, r.FD)
	}
	return complete(c.ex, vmloop.I64(c.ex.ArgI64(3)), sched.ActContinue)
}

// writeFailed: a write that timed out after it had sent part of its
// bytes (inline, or by short writes) returns that count, as Go's Write
// returns n with its deadline error: a TimeoutError would make the
// program send them again.
func (b *Bus) writeFailed(c ioCall, r sched.IOResult) (sched.Action, bool) {
	if r.TimedOut {
		if sent := writeSent(c.ex, r.Op); sent > 0 {
			return complete(c.ex, vmloop.I64(sent), sched.ActContinue), true
		}
	}
	return 0, false
}

// closeHandle is net.close and file.close. Idempotent, and never leaks
// the descriptor: with operations still naming it (another task's read),
// they are cancelled and the last one's completion closes it; the caller
// goes on.
func (b *Bus) closeHandle(c ioCall) sched.Action {
	if b.ctl.SubmitClose(c.t, c.h.fd, b.ctl.IOOp(c.t, evpoll.Op{})) {
		return sched.ActSuspend
	}
	return complete(c.ex, vmloop.Void(), sched.ActContinue)
}

// closeDone completes a close that waited.
func (b *Bus) closeDone(c ioCall, _ sched.IOResult) sched.Action {
	return complete(c.ex, vmloop.Void(), sched.ActContinue)
}
