package bus

import (
	"fmt"

	"github.com/jadevm/jade/iosys"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// The server I/O intrinsics of ABI 1.3 that do not wait: net.shutdown,
// net.local_addr, net.peer_addr and net.listen_opts (net.read_n and
// file.read_n are reads, in io.go). Each is one syscall on the calling
// worker, made with the descriptor's number held open (Control.UseFD).

// ListenReusePort is net.listen_opts's flag for SO_REUSEPORT: listeners
// of several processes (or tasks) share the port, and the kernel spreads
// new connections among them.
const ListenReusePort = 1

// listen opens a listener for net.listen and net.listen_opts, unless the
// runtime is draining (ShutdownError).
func (b *Bus) listen(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request, reusePort bool) sched.Action {
	addr, a := strArg(ex, 0)
	if a != sched.ActContinue {
		return a
	}
	if !b.Listening() {
		return raise(ex, shutdownErr(req, "no new listener is opened"))
	}
	num, err := iosys.ListenWith(b.ctl.IOName(t), addr, reusePort)
	if err != nil {
		return raise(ex, ioErr(req, err))
	}
	fd := b.ctl.NewFD(t, num)
	if !b.listeners.add(fd) { // a drain began meanwhile
		b.ctl.CloseFD(fd)
		return raise(ex, shutdownErr(req, "no new listener is opened"))
	}
	return complete(ex, newHandle("listener", fd), sched.ActContinue)
}

// listenOpts is net.listen_opts addr, flags.
func (b *Bus) listenOpts(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	fl := ex.ArgI64(1)
	if fl&^ListenReusePort != 0 {
		return raise(ex, vmloop.Err(vmloop.ErrKindError, fmt.Sprintf("%s: flags %d: want 0, or 1 for SO_REUSEPORT", req.Intr.Name, fl)))
	}
	return b.listen(t, ex, req, fl&ListenReusePort != 0)
}

// serverIO carries out net.shutdown, net.local_addr and net.peer_addr on
// h, a handle its caller owns; ok is false for other intrinsics.
func (b *Bus) serverIO(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request, h *ioHandle) (sched.Action, bool) {
	var res vmloop.Value
	var err error
	switch req.Intr.ID {
	case vmloop.IntrNetShutdown:
		how := ex.ArgI64(1)
		if how < iosys.ShutRead || how > iosys.ShutBoth {
			return raise(ex, vmloop.Err(vmloop.ErrKindError, fmt.Sprintf("%s: how %d: want 0 read, 1 write or 2 both", req.Intr.Name, how))), true
		}
		err = b.ctl.UseFD(h.fd, func(num int) error { return iosys.Shutdown(num, int(how)) })
		res = vmloop.Void()
	case vmloop.IntrNetLocalAddr, vmloop.IntrNetPeerAddr:
		err = b.ctl.UseFD(h.fd, func(num int) error {
			get := iosys.LocalAddr
			if req.Intr.ID == vmloop.IntrNetPeerAddr {
				get = iosys.PeerAddr
			}
			ap, err := get(num)
			res = vmloop.Str(ap.String())
			return err
		})
	default:
		return 0, false
	}
	if err == sched.ErrFDClosed {
		return raise(ex, vmloop.Err(vmloop.ErrKindIO, fmt.Sprintf("%s: %s is closed", req.Intr.Name, h))), true
	}
	if err != nil {
		return raise(ex, ioErr(req, err)), true
	}
	return complete(ex, res, sched.ActContinue), true
}
