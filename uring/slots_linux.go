//go:build linux

package uring

import (
	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/evpoll/slots"
	"golang.org/x/sys/unix"
)

// slot is one in-flight io_uring op. The slot owns the Go references the
// kernel depends on: op (and through it Buf), plus storage the kernel
// writes or reads by pointer (sa, salen, path). A slot is released only
// at its op's own final completion, so a cancelled op's sockaddr and
// buffer stay valid until the kernel has let go of them.
type slot struct {
	op    *evpoll.Op   // nil when free
	tok   evpoll.Token // handed back in the completion
	state uint8        // slotFree, slotActive
	// cancel is set by Cancel; a -ECANCELED result then carries FlagCancelled.
	cancel bool

	// Storage the kernel reads or writes by pointer; io_uring SQEs point
	// into it until the CQE. Both are allocated at first use and reused.
	sb   *sockBuf
	path []byte // NUL-terminated copy of op.Path
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
)

// slotTable is the shared generation-checked slot table (package
// evpoll/slots) holding the io_uring backend's slots (the epoll backend
// keeps its own in package evpoll/readiness). It grows in chunks as ops
// are submitted, up to MaxInFlight, and never moves a slot, so pointers
// into it (given to the kernel) never dangle. Callers hold the backend
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
	s.op, s.tok, s.state, s.cancel = op, tok, slotActive, false
	return idx, s, true
}

// lookup returns the slot named by id (active or done), or nil when id is
// stale (the slot was released, perhaps reused with a newer generation) or
// invalid; the backend's own user_data (internalUD) never names a slot.
func (t *slotTable) lookup(id evpoll.OpID) (int32, *slot) {
	if uint64(id)&internalUD != 0 {
		return -1, nil
	}
	return t.Lookup(id)
}

// release frees slot idx and drops its Go references.
func (t *slotTable) release(idx int32) {
	s := t.At(idx)
	s.op, s.tok, s.state, s.cancel = nil, 0, slotFree, false
	t.Release(idx)
}
