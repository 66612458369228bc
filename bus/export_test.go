package bus

import (
	"sync/atomic"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// ProbeIORow replaces the row of I/O intrinsic id by a probe row of its
// own, declared here and nowhere else: it reads one byte of its file
// handle's argument 1 (a buffer) with a backend Read, and completes with
// 1000 plus the bytes read. starts and dones count its functions' calls;
// restore puts the real row back. Nothing but the row is changed, so a
// program that sees the probe's result shows that the dispatcher and the
// resume read the row and switch on nothing else.
func ProbeIORow(id vmloop.IntrinsicID) (starts, dones *atomic.Int64, restore func()) {
	starts, dones = new(atomic.Int64), new(atomic.Int64)
	probe := &ioOp{kind: evpoll.Read, timed: true, arg: "file",
		start: func(b *Bus, c ioCall) sched.Action {
			starts.Add(1)
			buf, err := c.ex.ArgBytes(1)
			if err != nil {
				return trap(c.ex, err)
			}
			return b.submitIO(c.t, c.ex, c.req, b.ctl.IOOp(c.t, evpoll.Op{Kind: c.row.kind, Fd: c.h.fd.Num(), Buf: buf[:1], Offset: -1}), c.h.fd)
		},
		done: func(b *Bus, c ioCall, r sched.IOResult) sched.Action {
			dones.Add(1)
			return complete(c.ex, vmloop.I64(1000+int64(r.Res)), sched.ActContinue)
		},
	}
	old := commands[id]
	c := ioCommandRow(probe)
	commands[id] = &c
	return starts, dones, func() { commands[id] = old }
}

// ProbeRow replaces the command row of central intrinsic id by a probe
// row declared here and nowhere else: granted by capability need, it
// completes with 4242 and counts its calls. restore puts the real row
// back. A program that sees 4242, or the CapabilityError of an engine
// without need, shows that the dispatcher and the capability check read
// the row and nothing else.
func ProbeRow(id vmloop.IntrinsicID, need Capability) (calls *atomic.Int64, restore func()) {
	calls = new(atomic.Int64)
	old := commands[id]
	commands[id] = &command{grant: grantCap, need: need, handle: func(b *Bus, t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
		calls.Add(1)
		return complete(ex, vmloop.I64(4242), sched.ActContinue)
	}}
	return calls, func() { commands[id] = old }
}
