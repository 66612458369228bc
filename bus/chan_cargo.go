package bus

import (
	"fmt"

	"github.com/jadevm/jade/internal/chans"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// Socket and file handles in messages. A handle sent in a message moves
// its descriptor's ownership to the task that receives it, as a spawn
// argument moves it to the child: when the message is made, every handle
// it holds (at any depth) is taken from the sender (sched.DetachFD) —
// from then on the sender's copy is refused, and the sender's end no
// longer closes the descriptor — and the message carries the descriptors
// (its chans.Cargo). The receiver becomes their owner before it can run
// with the value (takeCargo). A message that is not sent (a full
// try_send, a closed channel, a timeout, a cancel, a select's send case
// replaced or dropped) gives them back to the sender, or closes them when
// the sender has ended (sched.ReturnFD); a message sent and never received
// (a channel or select collected with it, an unread select value, the
// host's receive) closes them; the runtime's Shutdown closes any still in
// transit. So each descriptor has one owner or none, and is closed exactly
// once.

// fdCargo is the descriptors a message carries.
type fdCargo struct {
	ctl *sched.Control
	fds []*sched.FD
}

// Drop settles the cargo of a message that no receiver took.
func (c *fdCargo) Drop(sent bool) {
	for _, f := range c.fds {
		if sent {
			c.ctl.CloseFD(f)
		} else {
			c.ctl.ReturnFD(f)
		}
	}
}

// ioHandles returns the distinct socket and file handles among exts (the
// host objects of the KindExt objects a message's value holds:
// vmloop.ArgCopy.Exts).
func ioHandles(exts []any) []*ioHandle {
	var out []*ioHandle
	for _, x := range exts {
		if h, ok := x.(*ioHandle); ok && !containsFD(out, h.fd) {
			out = append(out, h)
		}
	}
	return out
}

func containsFD(hs []*ioHandle, f *sched.FD) bool {
	for _, h := range hs {
		if h.fd == f {
			return true
		}
	}
	return false
}

// loadCargo takes the descriptors of the handles m's value holds from t
// and makes them m's cargo. A handle t does not own (passed on, sent in
// another message) or that is closed refuses the send: err is the
// IoError to throw, and nothing was taken.
func (b *Bus) loadCargo(t *sched.Task, req *vmloop.Request, m *chans.Msg, exts []any) (err *vmloop.Value) {
	hs := ioHandles(exts)
	if len(hs) == 0 {
		return nil
	}
	c := &fdCargo{ctl: b.ctl, fds: make([]*sched.FD, 0, len(hs))}
	for _, h := range hs {
		if ok, _ := b.ctl.DetachFD(t, h.fd); !ok {
			for _, f := range c.fds {
				b.ctl.ReturnFD(f)
			}
			_, why := staleHandle(t, h, false)
			if why == "" {
				why = h.String() + " is closed"
			}
			e := vmloop.Err(vmloop.ErrKindIO, req.Intr.Name+": "+why+"; only its owner may send it")
			return &e
		}
		c.fds = append(c.fds, h.fd)
	}
	m.SetCargo(c)
	return nil
}

// staleHandle reports whether h is a copy t may not use: its descriptor
// belongs to another task, is in a message, or was passed to another task
// that has closed it since (unless closing: a close of a closed
// descriptor does nothing, as it always did); why says which.
func staleHandle(t *sched.Task, h *ioHandle, closing bool) (stale bool, why string) {
	owns, owner := h.fd.OwnedBy(t)
	switch {
	case owns:
		return false, ""
	case owner != 0:
		return true, fmt.Sprintf("%s belongs to task %d, to which it was passed", h, owner)
	case h.fd.Detached():
		return true, fmt.Sprintf("%s was sent in a message that no task has received yet", h)
	}
	if p := h.fd.PassedTo(); p != 0 && p != t.ID() && !closing {
		return true, fmt.Sprintf("%s belongs to task %d, to which it was passed (and which has closed it)", h, p)
	}
	return false, "" // closed by t: the operation says so
}

// takeCargo makes t the owner of the descriptors m carries: t has taken
// m's value into its heap.
func (b *Bus) takeCargo(t *sched.Task, m *chans.Msg) {
	if c, _ := m.TakeCargo().(*fdCargo); c != nil {
		for _, f := range c.fds {
			b.ctl.PassFD(t, f)
		}
	}
}
