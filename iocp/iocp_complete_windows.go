//go:build windows

package iocp

import (
	"fmt"
	"math"
	"syscall"
	"unsafe"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/evpoll/winsock"
	"golang.org/x/sys/windows"
)

// result maps a transfer count and error code to Completion.Res.
func result(k evpoll.Kind, n uint32, errno syscall.Errno) int32 {
	switch {
	case errno == 0, errno == windows.ERROR_MORE_DATA:
		return int32(min(n, math.MaxInt32))
	case k == evpoll.Read && (errno == windows.ERROR_HANDLE_EOF || errno == windows.ERROR_BROKEN_PIPE):
		return 0 // end of file, or the writer of a pipe closed it
	}
	return -int32(errno)
}

// completeIOLocked handles one dequeued packet of an overlapped call.
func (b *Port) completeIOLocked(e *overlappedEntry) {
	io := (*ioBlock)(unsafe.Pointer(e.ov))
	idx := io.idx
	if idx < 0 || int(idx) >= b.slots.Len() || b.slots.At(idx).io != io || b.slots.At(idx).state != slotKernel {
		b.ctr.Stale.Add(1)
		return
	}
	s, st := b.slots.At(idx), b.slots.At(idx).st
	b.inKernel--
	for i, w := range st.ops {
		if w == idx {
			st.ops[i] = st.ops[len(st.ops)-1]
			st.ops = st.ops[:len(st.ops)-1]
			break
		}
	}
	n := e.qty
	var errno syscall.Errno
	if status := windows.NTStatus(io.ov.Internal); status != 0 {
		errno = status.Errno()
		if st.kind == fdSocket && !st.closed {
			// Winsock's own codes (WSAECONNRESET rather than
			// ERROR_NETNAME_DELETED), as Go's net package reports them.
			var qty, flags uint32
			b.ctr.Syscalls.Add(1)
			if err := windows.WSAGetOverlappedResult(s.h, &io.ov, &qty, false, &flags); err != nil {
				errno = errnoOf(err)
			} else {
				errno = 0 // a success status (a partial datagram, say)
			}
		}
	}
	res := result(s.op.Kind, n, errno)
	if s.cancel && (errno == windows.ERROR_OPERATION_ABORTED || st.closed && res < 0) {
		// Cancel or a Close op ended it (a closed socket may report a
		// disconnect code rather than an abort).
		res = errCanceled
	}
	switch s.op.Kind {
	case evpoll.Accept:
		res = b.acceptDoneLocked(s, res)
	case evpoll.Connect:
		if res >= 0 {
			b.ctr.Syscalls.Add(1)
			if err := windows.Setsockopt(s.h, windows.SOL_SOCKET, windows.SO_UPDATE_CONNECT_CONTEXT, nil, 0); err != nil {
				res = -int32(errnoOf(err))
			}
		}
	}
	b.finishLocked(idx, res)
}

// acceptDoneLocked finishes an AcceptEx: it makes the new socket a full
// socket (SO_UPDATE_ACCEPT_CONTEXT), reads the peer address into Op.Addr
// and associates the socket with the port. On failure the socket is
// closed.
func (b *Port) acceptDoneLocked(s *slot, res int32) int32 {
	io := s.io
	ah := io.ah
	io.ah = 0
	if res < 0 {
		_ = windows.Closesocket(ah)
		return res
	}
	fail := func(err error) int32 {
		_ = windows.Closesocket(ah)
		return -int32(errnoOf(err))
	}
	if uint64(ah) > math.MaxInt32 {
		return fail(windows.ERROR_INVALID_HANDLE) // Res cannot carry it
	}
	lh := s.h
	b.ctr.Syscalls.Add(2)
	if err := windows.Setsockopt(ah, windows.SOL_SOCKET, windows.SO_UPDATE_ACCEPT_CONTEXT,
		(*byte)(unsafe.Pointer(&lh)), int32(unsafe.Sizeof(lh))); err != nil {
		return fail(err)
	}
	var lsa, rsa *windows.RawSockaddrAny
	var llen, rlen int32
	n := uint32(unsafe.Sizeof(io.addrs[0]))
	windows.GetAcceptExSockaddrs((*byte)(unsafe.Pointer(&io.addrs[0])), 0, n, n, &lsa, &llen, &rsa, &rlen)
	if rsa != nil {
		if sa, err := rsa.Sockaddr(); err == nil {
			s.op.Addr = winsock.FromSockaddr(sa)
		}
	}
	if b.g.Closed {
		return int32(ah) // discarded by Close, which closes it
	}
	if _, err := windows.CreateIoCompletionPort(ah, b.port, keyIO, 0); err != nil {
		return fail(err)
	}
	b.fds[ah] = &fdState{kind: fdSocket, hi: register(ah, b, false)}
	return int32(ah)
}

// finishLocked records the result of slot idx and queues it for Wait.
// The slot stays taken (slotDone) until Wait returns the completion, so
// MaxInFlight also bounds undelivered completions.
func (b *Port) finishLocked(idx int32, res int32) {
	s := b.slots.At(idx)
	s.state, s.res = slotDone, res
	if s.posOp {
		s.posOp = false
		st := s.st
		if res > 0 {
			st.hi.pos.Add(int64(res))
		}
		st.posBusy = false
		if !st.closed {
			b.runPosQueueLocked(st)
		}
	}
	b.ready = append(b.ready, idx)
	b.kickLocked()
}

// kickLocked makes a goroutine blocked in Wait notice b.ready.
func (b *Port) kickLocked() {
	if b.g.Waiters > 0 && !b.kicked {
		b.kicked = true
		b.post(keyKick)
	}
}

// post queues a packet without an OVERLAPPED. Its error is ignored: it can
// only fail when the port is going away, and then nobody waits on it.
func (b *Port) post(key uintptr) {
	b.ctr.Syscalls.Add(1)
	_ = windows.PostQueuedCompletionStatus(b.port, 0, key, nil)
}

// errCancelNotPending is Cancel's error for an op that has finished, made
// once (the scheduler cancels finished polls routinely).
var errCancelNotPending = fmt.Errorf("iocp: cancel: %w", evpoll.ErrNotPending)

// Cancel implements evpoll.Backend with CancelIoEx on the op's own
// OVERLAPPED. The op completes when its packet arrives: -ECANCELED with
// FlagCancelled if the cancellation took, else its real result. An op
// queued behind its file position completes at once; an Open on the pool
// cannot be interrupted.
func (b *Port) Cancel(id evpoll.OpID) error {
	b.g.Mu.Lock()
	defer b.g.Mu.Unlock()
	if b.g.Closed {
		return fmt.Errorf("iocp: cancel: %w", evpoll.ErrClosed)
	}
	idx, s := b.slots.Lookup(id)
	if s == nil || s.state == slotDone {
		return errCancelNotPending
	}
	if s.cancel {
		return nil
	}
	s.cancel = true
	b.ctr.Cancelled.Add(1)
	switch s.state {
	case slotKernel:
		// ERROR_NOT_FOUND: it has already completed; its packet is queued.
		b.ctr.Syscalls.Add(1)
		_ = windows.CancelIoEx(s.h, &s.io.ov)
	case slotQueued:
		st := s.st
		for i, w := range st.posq {
			if w == idx {
				st.posq = append(st.posq[:i], st.posq[i+1:]...)
				break
			}
		}
		b.finishLocked(idx, errCanceled)
	}
	return nil
}
