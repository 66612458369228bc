package bus

import (
	"fmt"
	"net/netip"

	"github.com/jadevm/jade/internal/iosys"
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
	if !b.listening() {
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

// listenPlain is net.listen addr.
func (b *Bus) listenPlain(c ioCall) sched.Action { return b.listen(c.t, c.ex, c.req, false) }

// listenOpts is net.listen_opts addr, flags.
func (b *Bus) listenOpts(c ioCall) sched.Action {
	fl := c.ex.ArgI64(1)
	if fl&^ListenReusePort != 0 {
		return raise(c.ex, vmloop.Err(vmloop.ErrKindError, fmt.Sprintf("%s: flags %d: want 0, or 1 for SO_REUSEPORT", c.req.Intr.Name, fl)))
	}
	return b.listen(c.t, c.ex, c.req, fl&ListenReusePort != 0)
}

// shutdown is net.shutdown conn, how.
func (b *Bus) shutdown(c ioCall) sched.Action {
	how := c.ex.ArgI64(1)
	if how < iosys.ShutRead || how > iosys.ShutBoth {
		return raise(c.ex, vmloop.Err(vmloop.ErrKindError, fmt.Sprintf("%s: how %d: want 0 read, 1 write or 2 both", c.req.Intr.Name, how)))
	}
	err := b.ctl.UseFD(c.h.fd, func(num int) error { return iosys.Shutdown(num, int(how)) })
	return b.syscallDone(c, vmloop.Void(), err)
}

// localAddr is net.local_addr socket: the address it is bound to.
func (b *Bus) localAddr(c ioCall) sched.Action { return b.sockAddr(c, iosys.LocalAddr) }

// peerAddr is net.peer_addr conn: its peer's address.
func (b *Bus) peerAddr(c ioCall) sched.Action { return b.sockAddr(c, iosys.PeerAddr) }

// sockAddr completes with the address get reads from the socket.
func (b *Bus) sockAddr(c ioCall, get func(int) (netip.AddrPort, error)) sched.Action {
	var res vmloop.Value
	err := b.ctl.UseFD(c.h.fd, func(num int) error {
		ap, err := get(num)
		res = vmloop.Str(ap.String())
		return err
	})
	return b.syscallDone(c, res, err)
}

// syscallDone completes a request done by one syscall on the worker with
// res, or throws its error.
func (b *Bus) syscallDone(c ioCall, res vmloop.Value, err error) sched.Action {
	if err == sched.ErrFDClosed {
		return raise(c.ex, vmloop.Err(vmloop.ErrKindIO, fmt.Sprintf("%s: %s is closed", c.req.Intr.Name, c.h)))
	}
	if err != nil {
		return raise(c.ex, ioErr(c.req, err))
	}
	return complete(c.ex, res, sched.ActContinue)
}
