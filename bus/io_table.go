package bus

import (
	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// The I/O rows of the command table: one row per net.* or file.*
// intrinsic, naming the backend operation it submits, the handle its
// first argument must be, whether time.timeout bounds it, and the
// functions that start it (decode its arguments and submit, or complete
// at once), complete it, see its failure first and release what it
// produced for a task cancelled before it resumed. ioCommand, ioResume
// and ioAbandon read the row and switch on nothing: adding an I/O
// intrinsic is its row here plus its functions, and TestCommandTable
// fails for one of an I/O family without a complete row.

// ioOp is the I/O part of a command row (command.io).
type ioOp struct {
	// kind is the backend operation the intrinsic submits and resumes
	// from (evpoll.Close for a close, which may wait for the cancel of
	// other operations naming its descriptor); evpoll.Nop for one done
	// by a syscall on the calling worker, which never suspends.
	kind evpoll.Kind
	// timed: a wait for the peer or the file that time.timeout bounds
	// (command.timed).
	timed bool
	// arg is the handle argument 0 must be ("listener", "conn", "file",
	// or "socket": a conn or a listener; a close of a conn takes a
	// listener too); "" for an intrinsic whose argument 0 is an address
	// or a path, which names no handle.
	arg string
	// start decodes the arguments and submits the operation (submitIO),
	// or completes the request at once (an inline send, a syscall on the
	// worker, an argument error).
	start func(b *Bus, c ioCall) sched.Action
	// done completes a request whose operation succeeded (r.Res >= 0);
	// nil for a row of kind Nop.
	done func(b *Bus, c ioCall, r sched.IOResult) sched.Action
	// failed, if not nil, sees a failed or timed-out operation before the
	// common IoError or TimeoutError; ok false leaves it to them.
	failed func(b *Bus, c ioCall, r sched.IOResult) (a sched.Action, ok bool)
	// abandon, if not nil, releases what the completed operation r
	// produced for a task that was cancelled before it resumed (a new
	// descriptor, the socket of a connect).
	abandon func(b *Bus, r sched.IOResult)
}

// ioCall is one net.* or file.* request as its row's functions see it.
type ioCall struct {
	t   *sched.Task
	ex  *vmloop.Exec
	req *vmloop.Request
	row *ioOp
	h   *ioHandle // argument 0, for a row with arg; its caller owns it
}

// newIOCall is req's call record, its row looked up (by value: the rows'
// functions take it so, and it stays on the worker's stack).
func newIOCall(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) ioCall {
	return ioCall{t: t, ex: ex, req: req, row: commandOf(req.Intr.ID).io}
}

// ioRows lists the I/O rows (net.*, file.*) of the command table.
var ioRows = map[vmloop.IntrinsicID]*ioOp{
	vmloop.IntrNetListen:     {kind: evpoll.Nop, start: (*Bus).listenPlain},
	vmloop.IntrNetListenOpts: {kind: evpoll.Nop, start: (*Bus).listenOpts},
	vmloop.IntrNetAccept: {kind: evpoll.Accept, timed: true, arg: "listener", start: (*Bus).accept,
		done: (*Bus).acceptDone, failed: (*Bus).acceptFailed, abandon: (*Bus).closeProduced},
	vmloop.IntrNetConnect: {kind: evpoll.Connect, timed: true, start: (*Bus).connect,
		done: (*Bus).connectDone, failed: (*Bus).connectFailed, abandon: (*Bus).connectAbandon},
	vmloop.IntrFileOpen: {kind: evpoll.Open, timed: true, start: (*Bus).open,
		done: (*Bus).openDone, abandon: (*Bus).closeProduced},
	vmloop.IntrNetRead:   {kind: evpoll.Recv, timed: true, arg: "conn", start: (*Bus).netRead, done: (*Bus).readDone},
	vmloop.IntrNetReadN:  {kind: evpoll.Recv, timed: true, arg: "conn", start: (*Bus).netReadN, done: (*Bus).readDone},
	vmloop.IntrFileRead:  {kind: evpoll.Read, timed: true, arg: "file", start: (*Bus).fileRead, done: (*Bus).readDone},
	vmloop.IntrFileReadN: {kind: evpoll.Read, timed: true, arg: "file", start: (*Bus).fileReadN, done: (*Bus).readDone},
	vmloop.IntrNetWrite: {kind: evpoll.Send, timed: true, arg: "conn", start: (*Bus).netWrite,
		done: (*Bus).writeDone, failed: (*Bus).writeFailed},
	vmloop.IntrFileWrite: {kind: evpoll.Write, timed: true, arg: "file", start: (*Bus).fileWrite,
		done: (*Bus).writeDone, failed: (*Bus).writeFailed},
	// A close is not timed: it waits only for the cancel of other
	// operations naming its descriptor.
	vmloop.IntrNetClose:     {kind: evpoll.Close, arg: "conn", start: (*Bus).closeHandle, done: (*Bus).closeDone},
	vmloop.IntrFileClose:    {kind: evpoll.Close, arg: "file", start: (*Bus).closeHandle, done: (*Bus).closeDone},
	vmloop.IntrNetShutdown:  {kind: evpoll.Nop, arg: "conn", start: (*Bus).shutdown},
	vmloop.IntrNetLocalAddr: {kind: evpoll.Nop, arg: "socket", start: (*Bus).localAddr},
	vmloop.IntrNetPeerAddr:  {kind: evpoll.Nop, arg: "conn", start: (*Bus).peerAddr},
}

// ioCommandRow is the command row of I/O row op: every socket and file
// intrinsic needs CapIO and changes the outside world.
func ioCommandRow(op *ioOp) command {
	c := command{grant: grantCap, need: CapIO, mutates: true, timed: op.timed, handle: (*Bus).ioCommand, io: op}
	if op.kind != evpoll.Nop {
		c.resume, c.abandon = (*Bus).ioResume, (*Bus).ioAbandon
		c.wait, c.describe = sched.WaitIO, (*Bus).describeIOWait
	}
	return c
}

// ioOpOf returns the I/O row of id, or nil.
func ioOpOf(id vmloop.IntrinsicID) *ioOp {
	if c := commandOf(id); c != nil {
		return c.io
	}
	return nil
}

// ioCommand handles a net.* or file.* request by its row: the handle
// argument's check, then the row's start. CapIO was checked by the
// command table (authorize).
func (b *Bus) ioCommand(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	c := newIOCall(t, ex, req)
	if c.row.arg != "" {
		closing := c.row.kind == evpoll.Close
		h, a := handleArg(ex, req, c.row.arg, closing)
		if h == nil {
			return a
		}
		if stale, why := staleHandle(t, h, closing); stale {
			// Passed on at spawn or in a message: this copy is stale (a
			// use would race the new owner's, and its end closes the
			// descriptor).
			return raise(ex, vmloop.Err(vmloop.ErrKindIO, req.Intr.Name+": "+why+"; only its owner may use it"))
		}
		c.h = h
	}
	return c.row.start(b, c)
}
