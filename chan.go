package jade

import (
	"context"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/errs"
	"github.com/jadevm/jade/vmloop"
)

// Channels between the host and tasks (docs/MESSAGING.md). A channel is a
// bounded queue of values of one element type; tasks use it through the
// chan.* intrinsics, the host through the methods below, and a channel
// reaches a task as a spawn argument (or inside a message). What the host
// sends counts in the default engine's memory budget until a receiver
// takes it.

// ChanElem is the element type of a channel made by the host.
type ChanElem = vmloop.Kind

// Channel element types for NewChan.
const (
	ChanI64 ChanElem = vmloop.KindI64
	ChanF64 ChanElem = vmloop.KindF64
	ChanRef ChanElem = vmloop.KindArrayRef // any reference value
)

// ErrChanClosed is wrapped by the error of a send on a closed channel, a
// receive from a closed and drained one, and a second close.
var ErrChanClosed = bus.ErrChanClosed

// NewChan makes a channel of element type elem and capacity capacity
// (0: every send waits for a receiver; a negative capacity is an error).
func (r *Runtime) NewChan(elem ChanElem, capacity int) (Value, error) {
	v, err := r.def.NewChan(elem, capacity)
	return v, errs.Relabel("jade", "new channel", err)
}

// Send sends v on channel ch, waiting while the channel is full, until
// ctx ends. nil: v was sent (buffered or taken by a receiver); ctx's error
// or ErrChanClosed: v was not sent. A message holding a task or an event
// of another runtime is refused (ErrForeign).
func (r *Runtime) Send(ctx context.Context, ch, v Value) error {
	return errs.Relabel("jade", "send", r.def.Send(ctx, ch, v))
}

// Recv receives the oldest message of channel ch, waiting while it is
// empty, until ctx ends (ctx's error: nothing was taken). A closed channel
// gives what it still buffers, then ErrChanClosed.
func (r *Runtime) Recv(ctx context.Context, ch Value) (Value, error) {
	v, err := r.def.Recv(ctx, ch)
	return v, errs.Relabel("jade", "recv", err)
}

// CloseChan closes channel ch: waiting senders fail with ErrChanClosed,
// receivers drain what is buffered and then get ErrChanClosed.
func (r *Runtime) CloseChan(ch Value) error {
	return errs.Relabel("jade", "close", r.def.CloseChan(ch))
}
