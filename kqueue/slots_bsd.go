//go:build darwin || freebsd

package kqueue

import (
	"github.com/jadevm/jade/evpoll"
	"github.com/jadevm/jade/evpoll/slots"
	"golang.org/x/sys/unix"
)

// slot is one in-flight op. It owns the Go references the op depends on
// (op, and through it Buf and Path; sa, the connect address) until Wait has
// returned the op's completion.
type slot struct {
	op     *evpoll.Op   // nil when free
	tok    evpoll.Token // handed back in the completion
	state  uint8        // slotFree, slotActive, slotDone
	cancel bool         // set by Cancel; -ECANCELED then carries FlagCancelled
	wait   uint8        // where an active op waits: waitNone, waitRead, waitWrite, waitPool
	fd     int
	res    int32
	sa     unix.Sockaddr // Connect's address
}

const (
	slotFree   uint8 = iota
	slotActive       // submitted, not finished
	slotDone         // finished, completion not yet returned by Wait
)

// Where an active op waits (slot.wait).
const (
	waitNone uint8 = iota
	waitRead
	waitWrite
	waitPool
)

// Defaults of Options. defaultInFlight is far above the scheduler engine's
// own bound on ops in flight (sched.DefaultMaxInFlightIO), so that bound is
// reached first; the slot table grows lazily, so it costs nothing until
// used.
const (
	defaultInFlight = 1 << 20
	maxSlots        = slots.Max
)

// slotTable is the shared generation-checked slot table (package
// evpoll/slots) holding this backend's slots. Callers hold the backend
// mutex.
type slotTable struct {
	slots.Table[slot]
}

func newSlotTable(n int) *slotTable {
	return &slotTable{*slots.New[slot](n)}
}

// alloc takes a free slot for op and tok.
func (t *slotTable) alloc(op *evpoll.Op, tok evpoll.Token) (int32, *slot, bool) {
	idx, s, ok := t.Alloc()
	if !ok {
		return -1, nil, false
	}
	s.op, s.tok, s.state, s.cancel, s.wait, s.fd, s.res, s.sa = op, tok, slotActive, false, waitNone, op.Fd, 0, nil
	return idx, s, true
}

// release frees slot idx and drops its Go references.
func (t *slotTable) release(idx int32) {
	s := t.At(idx)
	s.op, s.tok, s.state, s.cancel, s.wait, s.sa = nil, 0, slotFree, false, waitNone, nil
	t.Release(idx)
}
