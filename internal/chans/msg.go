package chans

import (
	"math"
	"sync"
	"unsafe"

	"github.com/jadevm/jade/vmloop"
)

// msgOverhead is what a message costs beyond its value's own host bytes:
// the Msg record and its slot in the ring (56 bytes on 64-bit machines:
// an i64 or f64 is held unboxed in the record).
const msgOverhead = int64(unsafe.Sizeof(Msg{})) + 8

// Msg is one message: a value copied out of its sender's heap, and the
// charge it holds in its sender's engine's memory budget.
type Msg struct {
	bits uint64  // an i64 or f64 message's value
	ref  *refMsg // a reference message's value and cargo
	cost int64
	mem  *vmloop.Budget
	ch   *state // the channel state that counts it (cleanup, balance)
	// selCase is the select case a parked select's wake handed the
	// message to (Select.Wait); written by that waker under the channel's
	// mutex.
	selCase int32
	kind    vmloop.Kind // KindI64, KindF64, or a reference kind (ref)
	// sent: the message was buffered or handed to a receiver (it is no
	// longer its sender's to take back). Written under the channel's
	// mutex when that happens, read by whoever drops the message after.
	sent bool
}

// refMsg is the part of a reference message that a scalar one does not
// need, kept apart so that a buffered i64 or f64 stays small
// (chan_buffered_bytes).
type refMsg struct {
	v vmloop.Value
	// cargo is what passes with the value (SetCargo), nil once a receiver
	// took it (TakeCargo) or a drop settled it (Release).
	cargo Cargo
}

// Cargo is what a message carries beside its value whose ownership moves
// with it: the bus's socket and file handles. A receiver takes it with
// TakeCargo; a message released untaken settles it with Drop: sent
// reports whether the message had been sent (buffered or handed to a
// receiver: the sender gave it up, so it is closed) or not (a send that
// failed, timed out or was cancelled: it goes back to its sender).
type Cargo interface {
	Drop(sent bool)
}

// SetCargo attaches c to m, a reference message (before m is sent).
func (m *Msg) SetCargo(c Cargo) { m.ref.cargo = c }

// TakeCargo returns m's cargo for its receiver, who now owns it; m's
// Release then has nothing to settle.
func (m *Msg) TakeCargo() Cargo {
	if m.ref == nil {
		return nil
	}
	c := m.ref.cargo
	m.ref.cargo = nil
	return c
}

// NewMsg charges v to mem (nil: no budget) and returns it as a message;
// false when mem cannot take it (nothing is charged then).
func NewMsg(v vmloop.Value, mem *vmloop.Budget) (*Msg, int64, bool) {
	var hb int64
	if k := v.Kind(); k != vmloop.KindI64 && k != vmloop.KindF64 {
		hb = v.HostBytes()
	}
	return NewMsgSized(v, hb, mem)
}

// NewMsgSized is NewMsg of a v whose v.HostBytes() is hostBytes (counted
// while it was copied out of a heap: no walk of v).
func NewMsgSized(v vmloop.Value, hostBytes int64, mem *vmloop.Budget) (*Msg, int64, bool) {
	n := msgOverhead
	m := msgPool.Get().(*Msg)
	m.kind = v.Kind()
	switch v.Kind() {
	case vmloop.KindI64:
		m.bits = uint64(v.Int())
	case vmloop.KindF64:
		m.bits = math.Float64bits(v.Float())
	default:
		n += hostBytes        // the Value itself included
		m.ref = &refMsg{v: v} // only a reference's Value goes to the heap
	}
	if mem != nil && !mem.Take(n) {
		m.Recycle()
		return nil, n, false
	}
	m.cost, m.mem = n, mem
	return m, n, true
}

// msgPool holds the records of messages received for the next sends: a
// message sent and received allocates nothing in steady state.
var msgPool = sync.Pool{New: func() any { return new(Msg) }}

// Recycle clears m and keeps it for a later NewMsg. Only the last holder
// of a message may call it: a receiver whose heap took the value (after
// Release). Messages dropped any other way are left to the collector.
func (m *Msg) Recycle() {
	*m = Msg{}
	msgPool.Put(m)
}

// Value returns the message's value.
func (m *Msg) Value() vmloop.Value {
	switch m.kind {
	case vmloop.KindI64:
		return vmloop.I64(int64(m.bits))
	case vmloop.KindF64:
		return vmloop.F64(math.Float64frombits(m.bits))
	}
	return m.ref.v
}

// Release gives m's charge back: the receiver has taken the value into
// its heap (after TakeCargo), or it is dropped (then its cargo is settled:
// Cargo.Drop). It is idempotent.
func (m *Msg) Release() {
	if m.ref != nil && m.ref.cargo != nil {
		c := m.ref.cargo
		m.ref.cargo = nil
		c.Drop(m.sent)
	}
	if m.cost == 0 {
		return
	}
	if m.mem != nil {
		m.mem.Give(m.cost)
	}
	if m.ch != nil {
		m.ch.held.Add(-m.cost)
	}
	m.cost = 0
}

// DropImport releases m (vmloop.ImportHolder): the task that took it was
// dropped while its value was being imported into its heap in steps. The
// message was its: its charge goes back and its cargo is closed.
func (m *Msg) DropImport() { m.Release() }
