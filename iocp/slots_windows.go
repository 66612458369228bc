//go:build windows

package iocp

import (
	"github.com/jadevm/jade/evpoll"
	"golang.org/x/sys/windows"
)

// slot is one in-flight op. It owns every Go reference the kernel depends
// on until the op's completion packet has been dequeued: op (and through it
// Buf), and io, the OVERLAPPED block the kernel writes. Go heap objects do
// not move, and the slot table keeps them reachable, so the kernel never
// writes into memory the garbage collector could have freed.
type slot struct {
	op     *evpoll.Op   // nil when free
	tok    evpoll.Token // handed back in the completion
	gen    uint32       // bumped at release; a stale OpID fails the match
	state  uint8        // slotFree, slotKernel, slotQueued, slotPool, slotDone
	cancel bool         // set by Cancel (or a Close op on the handle)
	posOp  bool         // holds its file's position lock (Offset -1 on a disk file)
	next   int32        // free-list link
	h      windows.Handle
	st     *fdState // the handle's state when the op started
	res    int32
	io     *ioBlock // allocated at first use and reused; kernel-owned in slotKernel
}

// ioBlock is what an overlapped call hands the kernel. ov comes first, so
// the *Overlapped a completion packet carries is the *ioBlock itself; idx
// is checked against the slot table before it is trusted.
type ioBlock struct {
	ov     windows.Overlapped
	idx    int32
	qty    uint32 // bytes-transferred out-parameter (unused for overlapped results)
	flags  uint32 // WSARecv flags in/out
	wsabuf windows.WSABuf
	ah     windows.Handle   // AcceptEx: the socket that receives the connection
	sa     windows.Sockaddr // ConnectEx: the target (its raw form is read by pointer)
	addrs  [2]windows.RawSockaddrAny
}

const (
	slotFree   uint8 = iota
	slotKernel       // an overlapped call is in the kernel; its packet is owed
	slotQueued       // waits for its file's position lock
	slotPool         // Open running on the pool
	slotDone         // finished, completion not yet returned by Wait
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
	s.op, s.tok, s.state, s.cancel, s.posOp, s.next = op, tok, slotPool, false, false, -1
	s.h, s.st, s.res = windows.Handle(uintptr(op.Fd)), nil, 0
	if s.io == nil {
		s.io = &ioBlock{}
	}
	s.io.idx = idx
	return idx, s, true
}

// id is the OpID of slot idx.
func (t *slotTable) id(idx int32) evpoll.OpID {
	return evpoll.OpID(uint64(t.slots[idx].gen)<<slotBits | uint64(idx))
}

// lookup returns the slot named by id (not free), or nil when id is stale
// or invalid.
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

// release frees slot idx and drops its Go references. Only a slot whose
// packet has been dequeued (or that never reached the kernel) may be
// released: io is reused by the next op.
func (t *slotTable) release(idx int32) {
	s := &t.slots[idx]
	s.op, s.tok, s.state, s.cancel, s.posOp, s.st = nil, 0, slotFree, false, false, nil
	s.io.wsabuf, s.io.sa = windows.WSABuf{}, nil
	s.gen = (s.gen + 1) & genMask
	if s.gen == 0 {
		s.gen = 1
	}
	s.next = t.free
	t.free = idx
}
