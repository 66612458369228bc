//go:build linux

package uring

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/evpoll/unixsock"
	"golang.org/x/sys/unix"
)

// Submit implements evpoll.Backend. The SQE is written now and submitted
// at the next Wait; at once when the SQ is full or another goroutine is
// blocked in Wait (shared mode: it enters itself; owner mode: it kicks the
// owner, so that even a Submit from another thread starts promptly unless
// the SQ is full, see errNonOwnerFull).
func (b *Ring) Submit(op *evpoll.Op, tok evpoll.Token) (evpoll.OpID, error) {
	if op == nil || op.Kind >= evpoll.NumKinds {
		return 0, fmt.Errorf("uring: submit: %w", evpoll.ErrInvalidOp)
	}
	b.mu.Lock()
	id, err := b.submitLocked(op, tok)
	kick := err == nil && b.startNowLocked()
	b.mu.Unlock()
	if kick {
		_ = b.kick() // on failure the owner's next Wait still starts the op
	}
	return id, err
}

func (b *Ring) submitLocked(op *evpoll.Op, tok evpoll.Token) (evpoll.OpID, error) {
	if b.closed {
		return 0, fmt.Errorf("uring: submit: %w", evpoll.ErrClosed)
	}
	idx, s, ok := b.slots.alloc(op, tok)
	if !ok {
		return 0, fmt.Errorf("uring: submit: %w", evpoll.ErrTooMany)
	}
	if err := prepSlot(s, op); err != nil {
		b.slots.release(idx)
		return 0, err
	}
	e, err := b.sqeLocked()
	if err != nil {
		b.slots.release(idx)
		return 0, err
	}
	id := b.slots.ID(idx)
	fillSQE(e, s, op)
	e.UserData = uint64(id)
	b.r.publish()
	b.pending.Add(1)
	b.ctr.Submitted.Add(1)
	b.ctr.Kernel.Add(1)
	b.ctr.Ops[op.Kind].Add(1)
	return id, nil
}

// startNowLocked makes a just-queued SQE start although another goroutine
// is blocked in Wait (and will not submit it): in shared mode by entering
// the kernel here; in owner mode the caller is then necessarily not the
// owner, so it reports that the owner must be kicked (MSG_RING udKick) to
// come back and submit.
func (b *Ring) startNowLocked() (kick bool) {
	if b.waiters.Load() == 0 {
		return false
	}
	if b.owner {
		return true
	}
	b.flushLocked()
	return false
}

// prepSlot copies what the kernel reads by pointer into the slot.
func prepSlot(s *slot, op *evpoll.Op) error {
	switch op.Kind {
	case evpoll.Connect:
		n, err := putSockaddr(&s.sock().sa, op.Addr)
		if err != nil {
			return fmt.Errorf("uring: submit: connect: %w", evpoll.ErrInvalidOp)
		}
		s.sock().salen = n
	case evpoll.Accept:
		s.sock().salen = unix.SizeofSockaddrAny
	case evpoll.Open:
		for i := 0; i < len(op.Path); i++ {
			if op.Path[i] == 0 {
				return fmt.Errorf("uring: submit: open: NUL in path: %w", evpoll.ErrInvalidOp)
			}
		}
		s.path = append(append(s.path[:0], op.Path...), 0)
	}
	return nil
}

func bufAddr(p []byte) (uint64, uint32) {
	n := len(p)
	if n > math.MaxInt32 {
		n = math.MaxInt32
	}
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(p)))), uint32(n)
}

// fillSQE encodes op into e. Pointers refer to op.Buf or to slot storage,
// both referenced from the slot table until the CQE.
func fillSQE(e *sqe, s *slot, op *evpoll.Op) {
	e.Fd = int32(op.Fd)
	switch op.Kind {
	case evpoll.Nop:
		e.Opcode, e.Fd = opNop, -1
	case evpoll.Accept:
		e.Opcode = opAccept
		sb := s.sock()
		e.Addr = uint64(uintptr(unsafe.Pointer(&sb.sa)))
		e.Off = uint64(uintptr(unsafe.Pointer(&sb.salen)))
		e.OpFlags = unix.SOCK_CLOEXEC | unix.SOCK_NONBLOCK
	case evpoll.Connect:
		e.Opcode = opConnect
		sb := s.sock()
		e.Addr = uint64(uintptr(unsafe.Pointer(&sb.sa)))
		e.Off = uint64(sb.salen)
	case evpoll.Recv:
		e.Opcode = opRecv
		e.Addr, e.Len = bufAddr(op.Buf)
	case evpoll.Send:
		e.Opcode = opSend
		e.Addr, e.Len = bufAddr(op.Buf)
		e.OpFlags = unix.MSG_NOSIGNAL
	case evpoll.Read, evpoll.Write:
		e.Opcode = opRead
		if op.Kind == evpoll.Write {
			e.Opcode = opWrite
		}
		e.Addr, e.Len = bufAddr(op.Buf)
		e.Off = uint64(op.Offset) // -1 becomes ^0: the current position
	case evpoll.Open:
		e.Opcode, e.Fd = opOpenat, atFDCWD
		e.Addr = uint64(uintptr(unsafe.Pointer(unsafe.SliceData(s.path))))
		e.Len = op.Mode
		e.OpFlags = uint32(unixsock.OpenFlags(op.OpenFlags))
	case evpoll.Close:
		e.Opcode = opClose
	case evpoll.Poll:
		// One-shot IORING_OP_POLL_ADD; poll32_events shares the op-flags
		// word. POLLERR and POLLHUP are always reported.
		e.Opcode = opPollAdd
		e.OpFlags = unix.POLLIN | unix.POLLRDHUP
	}
}

// sqeLocked returns a free SQE, submitting the queued ones first when the
// SQ is full.
func (b *Ring) sqeLocked() (*sqe, error) {
	if e := b.r.nextSQE(); e != nil {
		return e, nil
	}
	if b.owner && unix.Gettid() != b.ownerTid {
		// Only the owner may enter the kernel (SINGLE_ISSUER: EEXIST).
		return nil, errNonOwnerFull
	}
	for range 3 {
		b.flushLocked()
		if e := b.r.nextSQE(); e != nil {
			return e, nil
		}
		// The kernel refused (EBUSY/EAGAIN): make room in the CQ.
		b.drainToReadyLocked()
	}
	return nil, errors.New("uring: submit: submission queue stays full")
}

var errNonOwnerFull = errors.New("uring: submit: submission queue full and the caller is not the ring's owner thread")

// flushLocked submits the queued SQEs without waiting. Failures other than
// EINTR/EAGAIN/EBUSY are kept for the next Wait: the SQEs are published, so
// Submit has already succeeded as far as the caller is concerned.
func (b *Ring) flushLocked() {
	for n := b.r.unsubmitted(); n > 0; n = b.r.unsubmitted() {
		var flags uint32
		if b.r.flags&setupDeferTaskrun != 0 {
			flags = enterGetEvents // also runs deferred task work
		}
		b.ctr.Syscalls.Add(1)
		_, err := b.r.enter(n, 0, flags, nil, 0)
		switch {
		case err == nil:
			continue
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EBUSY):
			return
		default:
			b.lastErr = fmt.Errorf("uring: enter: %w", err)
			return
		}
	}
}
