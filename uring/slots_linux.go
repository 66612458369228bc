//go:build linux

package uring

import (
	"github.com/jadevm/jade/evpoll"
	"golang.org/x/sys/unix"
)

// slot is one in-flight op. The slot owns the Go references the kernel
// depends on: op (and through it Buf), plus storage the kernel writes or
// reads by pointer (sa, salen, path). A slot is released only at its op's
// own final completion, so a cancelled op's sockaddr and buffer stay valid
// until the kernel has let go of them.
type slot struct {
	op    *evpoll.Op   // nil when free
	tok   evpoll.Token // handed back in the completion
	gen   uint32       // bumped at release; stale user_data fails the match
	state uint8        // slotFree, slotActive, slotDone
	// cancel is set by Cancel; a -ECANCELED result then carries FlagCancelled.
	cancel bool
	next   int32 // free-list link

	// Storage the kernel reads or writes by pointer; io_uring SQEs point
	// into it until the CQE. Both are allocated at first use and reused.
	sb   *sockBuf
	path []byte // NUL-terminated copy of op.Path

	// epoll: where the op waits, and its result once done.
	wait uint8
	fd   int
	res  int32
}

// sockBuf is a sockaddr and its length word: written by the kernel for
// Accept, read for Connect.
type sockBuf struct {
	sa    unix.RawSockaddrAny
	salen uint32
}

// sock returns the slot's sockaddr storage, allocating it once.
func (s *slot) sock() *sockBuf {
	if s.sb == nil {
		s.sb = new(sockBuf)
	}
	return s.sb
}

const (
	slotFree   uint8 = iota
	slotActive       // submitted, not finished
	slotDone         // epoll: finished, completion not yet returned by Wait
)

// slotTable is a fixed array of slots with a free list. It is allocated
// once and never grows, so pointers into it (given to the kernel) never
// dangle. Callers hold the backend mutex.
type slotTable struct {
	slots  []slot
	free   int32 // head of the free list, -1 when empty
	active int
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
	s.op, s.tok, s.state, s.cancel, s.next, s.wait, s.fd = op, tok, slotActive, false, -1, 0, -1
	t.active++
	return idx, s, true
}

// id is the OpID (and io_uring user_data) of slot idx.
func (t *slotTable) id(idx int32) evpoll.OpID {
	return evpoll.OpID(uint64(t.slots[idx].gen)<<slotBits | uint64(idx))
}

// lookup returns the slot named by id (active or done), or nil when id is
// stale (the slot was released, perhaps reused with a newer generation) or
// invalid.
func (t *slotTable) lookup(id evpoll.OpID) (int32, *slot) {
	idx, gen := uint64(id)&slotMask, uint32(uint64(id)>>slotBits)
	if uint64(id)&internalUD != 0 || idx >= uint64(len(t.slots)) {
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
	s.op, s.tok, s.state, s.cancel = nil, 0, slotFree, false
	s.gen = (s.gen + 1) & genMask
	if s.gen == 0 {
		s.gen = 1
	}
	s.next = t.free
	t.free = idx
	t.active--
}
