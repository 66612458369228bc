package bus

import (
	"context"
	"errors"
	"fmt"

	"github.com/jadevm/jade/internal/chans"
	"github.com/jadevm/jade/internal/errs"
	"github.com/jadevm/jade/vmloop"
)

// Channels seen from the host: a Go program feeds tasks and reads their
// results through the same channels tasks use. A channel is an object
// capability, as an event is: whoever holds the value may send, receive
// and close, so these commands check the member (a registered engine) and
// the handle, and charge what the host sends to the member's engine's
// memory budget (the host chose the message, as a sending task does).

// NewChan makes a channel of element kind elem (vmloop.KindI64, KindF64,
// or any reference kind for a channel of refs) and capacity capacity
// (0: every send waits for a receiver). Pass it to tasks as a spawn
// argument.
func (m *Member) NewChan(elem vmloop.Kind, capacity int) (vmloop.Value, error) {
	if m == nil {
		return vmloop.Value{}, fmt.Errorf("bus: new channel: no member: %w", ErrDenied)
	}
	e := chans.ElemRef
	switch {
	case elem == vmloop.KindI64:
		e = chans.ElemI64
	case elem == vmloop.KindF64:
		e = chans.ElemF64
	case elem.Type() != vmloop.TRef:
		return vmloop.Value{}, fmt.Errorf("bus: new channel: element kind %s is not i64, f64 or a reference", elem)
	}
	c, err := chans.New(e, int64(capacity))
	if err != nil {
		return vmloop.Value{}, errs.Wrap("bus", "new channel", err)
	}
	c.SetOwner(m.b)
	return vmloop.Ext(vmloop.KindExt, c), nil
}

func chanOf(ch vmloop.Value, op string) (*chans.Chan, error) {
	c, ok := ch.Obj().(*chans.Chan)
	if !ok || ch.Kind() != vmloop.KindExt {
		return nil, fmt.Errorf("bus: %s: value is %s, not a channel", op, ch.Kind())
	}
	return c, nil
}

// Send sends v on channel ch, waiting while it is full, until ctx ends.
// It returns nil once v is sent (buffered or taken by a receiver); an
// error wrapping chans' ErrClosed (errors.Is(err, ErrChanClosed)) when the channel is
// closed, and ctx's error when ctx ended first: v was then not sent.
func (m *Member) Send(ctx context.Context, ch, v vmloop.Value) error {
	c, err := chanOf(ch, "send")
	if err != nil {
		return err
	}
	if m != nil && c == m.b.drain {
		return fmt.Errorf("bus: send: nothing is sent on the drain channel (chan.drain): %w", ErrDenied)
	}
	if !c.Elem().Accepts(v.Kind()) {
		return fmt.Errorf("bus: send: value is %s, the channel carries %s", v.Kind(), c.Elem())
	}
	if hs := ioHandles(vmloop.ExtObjects(v)); len(hs) > 0 {
		return fmt.Errorf("bus: send: %s cannot travel in a message from the host (the host owns no socket or file handle)", hs[0])
	}
	if what := m.b.foreign(v); what != "" {
		// The receiver would hold it: a task of another runtime joined or
		// cancelled from this one, an event waited on here.
		return fmt.Errorf("bus: send: the message holds %s of another runtime: %w", what, ErrForeign)
	}
	mem := m.b.ctl.Budget(m.e)
	msg, n, ok := chans.NewMsg(v, mem)
	if !ok {
		return fmt.Errorf("bus: send: a message of %d bytes exceeds engine %q's memory limit (%d of %d bytes in use): %w", n, m.e.Name(), mem.Used(), mem.Limit(), ErrChanMemory)
	}
	if err := c.SendHost(msg, ctx.Done()); err != nil {
		msg.Release()
		if errors.Is(err, chans.ErrGaveUp) {
			return fmt.Errorf("bus: send: not sent: %w", ctx.Err())
		}
		return errs.Wrap("bus", "send", err)
	}
	return nil
}

// Recv receives the oldest message of channel ch, waiting while it is
// empty, until ctx ends (ctx's error: nothing was taken). Once the channel
// is closed and drained it returns an error wrapping ErrChanClosed.
func (m *Member) Recv(ctx context.Context, ch vmloop.Value) (vmloop.Value, error) {
	c, err := chanOf(ch, "recv")
	if err != nil {
		return vmloop.Value{}, err
	}
	msg, err := c.RecvHost(ctx.Done())
	if err != nil {
		if errors.Is(err, chans.ErrGaveUp) {
			return vmloop.Value{}, fmt.Errorf("bus: recv: nothing taken: %w", ctx.Err())
		}
		return vmloop.Value{}, errs.Wrap("bus", "recv", err)
	}
	v := msg.Value()
	msg.Release() // the host owns no descriptor: those it carries are closed
	return v, nil
}

// CloseChan closes channel ch: senders waiting on it get an error, receivers
// drain what is buffered and then get ErrChanClosed. A second close is an
// error wrapping ErrChanClosed.
func (m *Member) CloseChan(ch vmloop.Value) error {
	c, err := chanOf(ch, "close")
	if err != nil {
		return err
	}
	if m != nil && c == m.b.drain {
		return fmt.Errorf("bus: close: the drain channel (chan.drain) is closed only by the drain: %w", ErrDenied)
	}
	if err := c.Close(nil); err != nil {
		return errs.Wrap("bus", "close", err)
	}
	return nil
}

// ChanLen returns the number of messages buffered in channel ch, and
// ChanHeldBytes the bytes they (and the messages of waiting senders) hold
// in their senders' memory budgets.
func ChanLen(ch vmloop.Value) (int, error) {
	c, err := chanOf(ch, "len")
	if err != nil {
		return 0, err
	}
	return int(c.Len()), nil
}

// ChanHeldBytes: see ChanLen.
func ChanHeldBytes(ch vmloop.Value) (int64, error) {
	c, err := chanOf(ch, "held bytes")
	if err != nil {
		return 0, err
	}
	return c.HeldBytes(), nil
}

// ErrChanClosed is wrapped by the errors of a send on a closed channel, a
// receive from a closed and drained one, and a second close.
var ErrChanClosed = chans.ErrClosed

// ErrChanMemory is wrapped by the error of a send that the memory budget
// refused.
var ErrChanMemory = errors.New("memory limit reached")
