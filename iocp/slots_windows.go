//go:build windows

package iocp

import (
	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/evpoll/slots"
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
	state  uint8        // slotFree, slotKernel, slotQueued, slotPool, slotDone
	cancel bool         // set by Cancel (or a Close op on the handle)
	posOp  bool         // holds its file's position lock (Offset -1 on a disk file)
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
	owner  *Port // the Port whose slot table holds this block (set once)
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
	owner *Port
}

func newSlotTable(n int, owner *Port) *slotTable {
	return &slotTable{*slots.New[slot](n), owner}
}

// init readies the freshly allocated slot s (index idx) for op and tok.
func (t *slotTable) init(idx int32, s *slot, op *evpoll.Op, tok evpoll.Token) {
	s.op, s.tok, s.state, s.cancel, s.posOp = op, tok, slotPool, false, false
	s.h, s.st, s.res = windows.Handle(uintptr(op.Fd)), nil, 0
	if s.io == nil {
		s.io = &ioBlock{owner: t.owner}
	}
	s.io.idx = idx
}

// Completion is a finished slot's completion (slots.Deliver).
func (s *slot) Completion() evpoll.Completion {
	var fl uint32
	if s.cancel && s.res == errCanceled {
		fl = evpoll.FlagCancelled
	}
	return evpoll.Completion{Token: s.tok, Res: s.res, Flags: fl}
}

// Clear drops the slot's Go references before it is released. Only a slot
// whose packet has been dequeued (or that never reached the kernel) may
// be released: io is reused by the next op.
func (s *slot) Clear() {
	s.op, s.tok, s.state, s.cancel, s.posOp, s.st = nil, 0, slotFree, false, false, nil
	s.io.wsabuf, s.io.sa = windows.WSABuf{}, nil
}

// release frees slot idx and drops its Go references.
func (t *slotTable) release(idx int32) {
	t.At(idx).Clear()
	t.Release(idx)
}
