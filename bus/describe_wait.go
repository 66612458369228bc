package bus

import (
	"fmt"

	"github.com/jadevm/jade/internal/iosys"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

var _ sched.WaitDescriber = (*dispatcher)(nil)

// DescribeWait says what task t waits for in intrinsic in
// (sched.WaitDescriber): the kind from the intrinsic's command row alone
// (command.wait), and with ex (the world stopped, the request pending)
// what the row's describe finds: the joined task, the event's register,
// the socket or file and its addresses. It only reads: a handle that
// does not resolve leaves the description at the kind.
func (d *dispatcher) DescribeWait(t *sched.Task, in *vmloop.Intrinsic, ex *vmloop.Exec) sched.Wait {
	b := (*Bus)(d)
	w := sched.Wait{Op: in.Name, Kind: sched.WaitOther}
	if in.ID >= vmloop.HostIntrinsicBase {
		w.Kind, w.For = sched.WaitHost, "the host's result"
		if h := b.hostIntrinsic(in.ID); h != nil && h.blocking != nil {
			w.For = "a blocking host call"
		}
		return w
	}
	c := commandOf(in.ID)
	if c == nil {
		return w
	}
	if c.wait != "" {
		w.Kind = c.wait
	}
	if c.describe != nil {
		c.describe(b, &w, ex)
	}
	return w
}

// describeJoin: the joined task (task.join_*, task.outcome).
func (b *Bus) describeJoin(w *sched.Wait, ex *vmloop.Exec) {
	if ex == nil {
		return
	}
	if obj, err := ex.ArgObj(0, vmloop.KindTask); err == nil {
		target := obj.(*sched.Task)
		w.Task, w.For = target.ID(), taskLabel(target)
	}
}

// describeEvent: the event, by the name of its register if known.
func (b *Bus) describeEvent(w *sched.Wait, ex *vmloop.Exec) {
	w.For = "an event"
	if ex != nil {
		if n := ex.ArgName(0); n != "" {
			w.For = "event " + n
		}
	}
}

// describeTick: time.tick.
func (b *Bus) describeTick(w *sched.Wait, _ *vmloop.Exec) {
	w.For = "the next tick of a periodic job"
}

// describeIOWait: the socket or file of a net.* or file.* row.
func (b *Bus) describeIOWait(w *sched.Wait, ex *vmloop.Exec) {
	if ex != nil {
		b.describeIO(w, ex)
	}
}

// describeIO fills w from the socket or file handle among the pending
// request's arguments (the first one), with a socket's addresses.
func (b *Bus) describeIO(w *sched.Wait, ex *vmloop.Exec) {
	req := ex.Request()
	if req == nil {
		return
	}
	for i, pt := range req.Intr.Params {
		if pt != vmloop.TRef {
			continue
		}
		obj, ok := ex.ArgExt(i)
		if !ok {
			// net.connect's address, file.open's path: argument 0 of a
			// row that names no handle, a string (ArgObj of another kind
			// would record a trap place in ex: not here).
			if op := ioOpOf(req.Intr.ID); op != nil && op.arg == "" && i == 0 && w.For == "" {
				if s, err := ex.ArgObj(i, vmloop.KindString); err == nil {
					w.For = fmt.Sprintf("%q", s)
				}
			}
			continue
		}
		h, ok := obj.(*ioHandle)
		if !ok {
			continue
		}
		what := "socket"
		switch h.kind {
		case "listener":
			what = "listener"
		case "file":
			what = "file"
		}
		w.For = fmt.Sprintf("%s fd %d", what, h.fd.Num())
		if what != "file" {
			b.ctl.UseFD(h.fd, func(num int) error {
				if ap, err := iosys.LocalAddr(num); err == nil {
					w.Local = ap.String()
				}
				if what == "socket" {
					if ap, err := iosys.PeerAddr(num); err == nil {
						w.Peer = ap.String()
					}
				}
				return nil
			})
		}
		return
	}
}

// hostIntrinsic returns the registration of host intrinsic id, or nil.
func (b *Bus) hostIntrinsic(id vmloop.IntrinsicID) *hostIntrinsic {
	b.hostMu.RLock()
	defer b.hostMu.RUnlock()
	if idx := int(id - vmloop.HostIntrinsicBase); idx >= 0 && idx < len(b.hostID) {
		return b.hostID[idx]
	}
	return nil
}
