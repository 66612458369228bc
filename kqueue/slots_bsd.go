//go:build darwin || freebsd

package kqueue

import (
	"github.com/jadevm/jade/evpoll"
	"golang.org/x/sys/unix"
)

// slot is one in-flight op. It owns the Go references the op depends on
// (op, and through it Buf and Path; sa, the connect address) until Wait has
// returned the op's completion.
type slot struct {
	op     *evpoll.Op   // nil when free
	tok    evpoll.Token // handed back in the completion
	gen    uint32       // bumped at release; a stale OpID fails the match
	state  uint8        // slotFree, slotActive, slotDone
	cancel bool         // set by Cancel; -ECANCELED then carries FlagCancelled
	wait   uint8        // where an active op waits: waitNone, waitRead, waitWrite, waitPool
	next   int32        // free-list link
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

// Defaults of Options.
const (
	defaultInFlight = 4096
	defaultPoolSize = 4
	maxSlots        = 1 << 24 // slot indices are int32 in the free list
)

// OpID layout: slot | generation<<32, generation in bits 32..62, never 0.
const (
	slotBits = 32
	slotMask = 1<<slotBits - 1
	genMask  = 1<<31 - 1
)

// slotTable is a fixed array of slots with a free list, allocated once.
// Callers hold the backend mutex.
type slotTable struct {
	slots []slot
	free  int32 // head of the free list, -1 when empty
}

func newSlotTable(n int) *slotTable {
	t := &slotTable{slots: make([]slot, n), free: -1}
	for i := n - 1; i >= 0; i-- {
		t.slots[i].gen = 1
		t.slots[i].next = t.free
		t.free = int32(i)
	}
	return t
}

// alloc takes a free slot for op and tok.
func (t *slotTable) alloc(op *evpoll.Op, tok evpoll.Token) (int32, *slot, bool) {
	idx := t.free
	if idx < 0 {
		return -1, nil, false
	}
	s := &t.slots[idx]
	t.free = s.next
	s.op, s.tok, s.state, s.cancel, s.wait, s.next, s.fd, s.res, s.sa = op, tok, slotActive, false, waitNone, -1, op.Fd, 0, nil
	return idx, s, true
}

// id is the OpID of slot idx.
func (t *slotTable) id(idx int32) evpoll.OpID {
	return evpoll.OpID(uint64(t.slots[idx].gen)<<slotBits | uint64(idx))
}

// lookup returns the slot named by id (active or done), or nil when id is
// stale or invalid.
func (t *slotTable) lookup(id evpoll.OpID) (int32, *slot) {
	idx, gen := uint64(id)&slotMask, uint32(uint64(id)>>slotBits)
	if idx >= uint64(len(t.slots)) {
		return -1, nil
	}
	s := &t.slots[idx]
	if s.state == slotFree || s.gen != gen {
		return -1, nil
	}
	return int32(idx), s
}

// release frees slot idx and drops its Go references.
func (t *slotTable) release(idx int32) {
	s := &t.slots[idx]
	s.op, s.tok, s.state, s.cancel, s.wait, s.sa = nil, 0, slotFree, false, waitNone, nil
	s.gen = (s.gen + 1) & genMask
	if s.gen == 0 {
		s.gen = 1
	}
	s.next = t.free
	t.free = idx
}
