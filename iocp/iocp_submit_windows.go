//go:build windows

package iocp

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/evpoll/slots"
	"github.com/jadevm/jade/internal/evpoll/winsock"
	"golang.org/x/sys/windows"
)

// Submit implements evpoll.Backend. Socket and file I/O starts an
// overlapped call at once; Open goes to the pool.
func (b *Port) Submit(op *evpoll.Op, tok evpoll.Token) (evpoll.OpID, error) {
	if op != nil && op.Kind == evpoll.Poll {
		// Completion ports report finished operations, not readiness.
		return 0, fmt.Errorf("iocp: submit: poll: readiness is not supported: %w", evpoll.ErrInvalidOp)
	}
	return slots.Submit((*waiter)(b), "iocp", &b.pending, &b.ctr, op, tok)
}

// startLocked associates the handle if needed and starts the op, or
// queues it behind the file position.
func (b *Port) startLocked(idx int32, s *slot) {
	st, err := b.fdLocked(s.h)
	if err != nil {
		b.finishLocked(idx, -int32(errnoOf(err)))
		return
	}
	s.st = st
	switch s.op.Kind {
	case evpoll.Accept, evpoll.Connect, evpoll.Recv, evpoll.Send:
		st.kind = fdSocket
	case evpoll.Read, evpoll.Write:
		if s.op.Offset >= 0 || st.kind != fdFile {
			b.issueLocked(idx, s, max(s.op.Offset, 0))
			return
		}
		if s.op.Kind == evpoll.Write && st.append {
			b.issueLocked(idx, s, -1)
			return
		}
		// Overlapped file handles have no file position: the backend
		// keeps one, and Offset -1 ops take it one at a time, in order.
		s.state = slotQueued
		st.posq = append(st.posq, idx)
		b.runPosQueueLocked(st)
		return
	}
	b.issueLocked(idx, s, 0)
}

// fdLocked returns the state of h, associating it with the port at first
// use unless another Port of the process has it already (associate). The
// association fails for handles not opened for overlapped I/O in some
// cases, and for handles bound to a port that is not one of ours.
func (b *Port) fdLocked(h windows.Handle) (*fdState, error) {
	if st, ok := b.fds[h]; ok {
		return st, nil
	}
	b.ctr.Syscalls.Add(2)
	kind := fdOther
	if t, err := windows.GetFileType(h); err == nil && t == windows.FILE_TYPE_DISK {
		kind = fdFile
	}
	hi, err := b.associate(h)
	if err != nil {
		return nil, err
	}
	st := &fdState{kind: kind, append: hi.append, hi: hi}
	b.fds[h] = st
	return st, nil
}

// runPosQueueLocked starts queued Offset -1 ops while the position is free.
func (b *Port) runPosQueueLocked(st *fdState) {
	if st.running {
		return
	}
	st.running = true
	for !st.posBusy && len(st.posq) > 0 {
		idx := st.posq[0]
		st.posq = st.posq[1:]
		s := b.slots.At(idx)
		if b.g.Closed {
			s.cancel = true // Close is draining: start nothing new
			b.finishLocked(idx, errCanceled)
			continue
		}
		st.posBusy, s.posOp = true, true
		b.issueLocked(idx, s, st.hi.pos.Load())
	}
	st.running = false
}

// issueLocked makes the overlapped call of slot idx. off is the file
// offset of Read and Write, -1 for the end of file.
func (b *Port) issueLocked(idx int32, s *slot, off int64) {
	io, op := s.io, s.op
	io.ov = windows.Overlapped{}
	io.qty, io.flags = 0, 0
	buf := op.Buf
	if len(buf) > math.MaxInt32 {
		buf = buf[:math.MaxInt32]
	}
	var err error
	switch op.Kind {
	case evpoll.Recv:
		io.wsabuf = windows.WSABuf{Len: uint32(len(buf)), Buf: bufPtr(buf)}
		b.ctr.Syscalls.Add(1)
		err = windows.WSARecv(s.h, &io.wsabuf, 1, &io.qty, &io.flags, &io.ov, nil)
	case evpoll.Send:
		io.wsabuf = windows.WSABuf{Len: uint32(len(buf)), Buf: bufPtr(buf)}
		b.ctr.Syscalls.Add(1)
		err = windows.WSASend(s.h, &io.wsabuf, 1, &io.qty, 0, &io.ov, nil)
	case evpoll.Read, evpoll.Write:
		if off < 0 {
			io.ov.Offset, io.ov.OffsetHigh = appendOffset, appendOffset
		} else {
			io.ov.Offset, io.ov.OffsetHigh = uint32(off), uint32(off>>32)
		}
		b.ctr.Syscalls.Add(1)
		if op.Kind == evpoll.Read {
			err = windows.ReadFile(s.h, buf, &io.qty, &io.ov)
		} else {
			err = windows.WriteFile(s.h, buf, &io.qty, &io.ov)
		}
	case evpoll.Accept:
		err = b.acceptStart(s)
	case evpoll.Connect:
		err = b.connectStart(s)
	default:
		err = windows.ERROR_INVALID_FUNCTION
	}
	if err != nil && !errors.Is(err, windows.ERROR_IO_PENDING) {
		// Failed at once: no packet will be queued.
		if io.ah != 0 && io.ah != windows.InvalidHandle {
			_ = windows.Closesocket(io.ah)
		}
		io.ah = 0
		b.finishLocked(idx, result(op.Kind, 0, errnoOf(err)))
		return
	}
	// Queued or done: either way a packet follows (no
	// FILE_SKIP_COMPLETION_PORT_ON_SUCCESS), and the slot keeps io, Buf and
	// sa referenced until it is dequeued.
	s.state = slotKernel
	b.inKernel++
	b.ctr.Kernel.Add(1)
	s.st.ops = append(s.st.ops, idx)
}

// acceptStart creates the socket that will receive the connection and
// calls AcceptEx on the listener.
func (b *Port) acceptStart(s *slot) error {
	st, io := s.st, s.io
	if st.family == 0 {
		b.ctr.Syscalls.Add(1)
		sa, err := windows.Getsockname(s.h)
		if err != nil {
			return err
		}
		st.family = windows.AF_INET
		if _, ok := sa.(*windows.SockaddrInet6); ok {
			st.family = windows.AF_INET6
		}
	}
	b.ctr.Syscalls.Add(2)
	ah, err := winsock.NewSocket(st.family)
	if err != nil {
		return err
	}
	io.ah = ah
	n := uint32(unsafe.Sizeof(io.addrs[0]))
	return windows.AcceptEx(s.h, ah, (*byte)(unsafe.Pointer(&io.addrs[0])), 0, n, n, &io.qty, &io.ov)
}

// connectStart binds the socket to the wildcard address if it is not
// bound yet (ConnectEx requires it) and calls ConnectEx.
func (b *Port) connectStart(s *slot) error {
	var wild windows.Sockaddr = &windows.SockaddrInet4{}
	if _, ok := s.io.sa.(*windows.SockaddrInet6); ok {
		wild = &windows.SockaddrInet6{}
	}
	b.ctr.Syscalls.Add(2)
	if err := windows.Bind(s.h, wild); err != nil && !errors.Is(err, windows.WSAEINVAL) {
		return err // WSAEINVAL: already bound
	}
	return windows.ConnectEx(s.h, s.io.sa, nil, 0, &s.io.qty, &s.io.ov)
}

// closeLocked handles a Close op: it forgets the handle, cancels what is
// in the kernel on it (those ops complete with -ECANCELED and
// FlagCancelled when their packets arrive), fails the ops queued behind
// its file position, and closes it: closesocket for sockets, CloseHandle
// for the rest.
func (b *Port) closeLocked(idx int32, s *slot) {
	st, ok := b.fds[s.h]
	kind := fdOther
	unregister(s.h, nil) // whichever Port is its home: the handle value may be reused
	if ok {
		delete(b.fds, s.h)
		st.closed = true
		kind = st.kind
		for _, w := range st.ops {
			b.slots.At(w).cancel = true
		}
		q := st.posq
		st.posq = nil
		for _, w := range q {
			b.slots.At(w).cancel = true
			b.finishLocked(w, errCanceled)
		}
		if len(st.ops) > 0 {
			b.ctr.Syscalls.Add(1)
			_ = windows.CancelIoEx(s.h, nil)
		}
	}
	b.ctr.Syscalls.Add(1)
	var err error
	switch kind {
	case fdSocket:
		err = windows.Closesocket(s.h)
	case fdFile:
		err = windows.CloseHandle(s.h)
	default:
		if err = windows.Closesocket(s.h); errors.Is(err, windows.WSAENOTSOCK) {
			b.ctr.Syscalls.Add(1)
			err = windows.CloseHandle(s.h)
		}
	}
	res := int32(0)
	if err != nil {
		res = -int32(errnoOf(err))
	}
	b.finishLocked(idx, res)
}
