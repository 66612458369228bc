//go:build windows

package iocp

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/evpoll/slots"
	"github.com/jadevm/jade/internal/evpoll/winsock"
	"golang.org/x/sys/windows"
)

// Port is an evpoll.Backend on an I/O completion port. All methods are
// safe for concurrent use; several goroutines may block in Wait at once.
type Port struct {
	g        slots.Gate // g.Mu guards g's state and the fields up to pool; g.Wake.Mu also gone and inbox
	slots    *slotTable
	fds      map[windows.Handle]*fdState
	ready    []int32 // done slots, in completion order
	kicked   bool    // an internal kick packet is outstanding
	inKernel int     // ops whose completion packet is still owed
	pool     *openPool

	port    windows.Handle
	gone    bool              // the port handle is being closed: forward nothing more; guarded by g.Wake.Mu
	inbox   []overlappedEntry // packets of this port's ops dequeued by another Port (share_windows.go); guarded by g.Wake.Mu
	pending atomic.Int64
	reason  string
	ctr     evpoll.Counters
}

var _ evpoll.Backend = (*Port)(nil)

// fdState is what the backend knows of one handle associated with the
// port (an association lasts as long as the handle).
type fdState struct {
	kind    uint8       // fdOther, fdSocket, fdFile
	closed  bool        // a Close op closed the handle
	append  bool        // opened with evpoll.Append: Offset -1 writes go to the end
	family  int32       // a listener's address family, learnt at its first Accept
	ops     []int32     // slots with an overlapped call in the kernel on this handle
	hi      *handleInfo // what every Port shares of the handle: its home port, its file position
	posBusy bool        // an Offset -1 op of this port holds the position
	posq    []int32     // Offset -1 ops waiting for the position, in order
	running bool        // runPosQueueLocked is active (no recursion)
}

// Handle kinds.
const (
	fdOther  uint8 = iota // pipe, character device, or not yet known
	fdSocket              // ops went through Winsock
	fdFile                // FILE_TYPE_DISK: overlapped offsets, tracked position
)

// Completion keys. Handles are associated with keyIO; the packets posted
// with PostQueuedCompletionStatus carry the others and no OVERLAPPED.
const (
	keyIO uintptr = iota
	keyWake
	keyKick
	keyForward // the inbox has packets forwarded by another Port
)

// appendOffset in both OVERLAPPED offset words writes at the end of file.
const appendOffset = 0xFFFFFFFF

// errCanceled is the Res of a cancelled op: -ECANCELED with Go's Windows
// errno for ECANCELED (syscall.ECANCELED), so Completion.Err matches it.
const errCanceled = -int32(syscall.ECANCELED)

// graveyard keeps the slot tables of closed ports whose kernel ops did not
// all come back within Close's grace period: the kernel may still write
// into their OVERLAPPED blocks and buffers, so they must never be freed.
var graveyard struct {
	sync.Mutex
	tables []*slotTable
}

// Open creates an IOCP backend.
func Open(o Options) (evpoll.Backend, error) {
	return New(o)
}

// New creates an IOCP backend and returns its concrete type.
func New(o Options) (*Port, error) {
	if err := winsock.Init(); err != nil {
		return nil, fmt.Errorf("iocp: wsastartup: %w", err)
	}
	if err := procGetQueuedCompletionStatusEx.Find(); err != nil {
		return nil, fmt.Errorf("iocp: GetQueuedCompletionStatusEx: %w", err)
	}
	port, err := windows.CreateIoCompletionPort(windows.InvalidHandle, 0, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("iocp: CreateIoCompletionPort: %w", err)
	}
	n := o.MaxInFlight
	if n <= 0 {
		n = defaultInFlight
	}
	n = min(n, maxSlots)
	b := &Port{fds: make(map[windows.Handle]*fdState), port: port}
	b.slots = newSlotTable(n, b)
	b.pool = newOpenPool(b, o.PoolSize)
	b.reason = fmt.Sprintf("iocp GetQueuedCompletionStatusEx(ms) pool=%d", b.pool.Size())
	return b, nil
}

// Name implements evpoll.Backend.
func (b *Port) Name() string { return "iocp" }

// Reason describes the backend's configuration, for logs.
func (b *Port) Reason() string { return b.reason }

// Pending implements evpoll.Backend.
func (b *Port) Pending() int { return int(b.pending.Load()) }

// Stats implements evpoll.Backend.
func (b *Port) Stats() evpoll.Stats { return b.ctr.Snapshot() }

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

// Wait implements evpoll.Backend with GetQueuedCompletionStatusEx (the
// loop shared with the readiness core, slots.Wait). IOCP timeouts are
// whole milliseconds: the timeout is rounded up (a Wait never ends early),
// so its precision is that of the system timer, coarser than the timespec
// the contract describes.
func (b *Port) Wait(timeout time.Duration, out []evpoll.Completion) (int, error) {
	return slots.Wait((*waiter)(b), "iocp", timeout, out)
}

// waiter is the Port as slots.Wait drives it.
type waiter Port

func (w *waiter) Gate() *slots.Gate                         { return &w.g }
func (w *waiter) DeliverLocked(out []evpoll.Completion) int { return (*Port)(w).deliverLocked(out) }
func (w *waiter) KickLocked()                               { (*Port)(w).post(keyKick) }
func (w *waiter) Table() *slots.Table[slot]                 { return &w.slots.Table }
func (w *waiter) CompleteLocked(idx, res int32)             { (*Port)(w).finishLocked(idx, res) }
func (w *waiter) PoolLocked(idx int32, s *slot)             { (*Port)(w).toPoolLocked(idx, s) }
func (w *waiter) CloseLocked(idx int32, s *slot)            { (*Port)(w).closeLocked(idx, s) }
func (w *waiter) StartLocked(idx int32, s *slot)            { (*Port)(w).startLocked(idx, s) }

// InitLocked readies slot s for op and tok, with a Connect's target
// address in the form ConnectEx takes.
func (w *waiter) InitLocked(idx int32, s *slot, op *evpoll.Op, tok evpoll.Token) error {
	var sa windows.Sockaddr
	if op.Kind == evpoll.Connect {
		var err error
		if sa, err = winsock.ToSockaddr(op.Addr); err != nil {
			return fmt.Errorf("connect: %w: %w", evpoll.ErrInvalidOp, err)
		}
	}
	w.slots.init(idx, s, op, tok)
	s.io.sa = sa
	return nil
}

// PollLocked dequeues packets and handles them.
func (w *waiter) PollLocked(rem time.Duration) (woke bool, err error) {
	b := (*Port)(w)
	// The kernel writes OVERLAPPED pointers into ents during the call. A
	// goroutine's stack does not move while it is in a system call, and
	// every pointer written there names an ioBlock the slot table keeps
	// alive, so the collector never sees a dangling pointer.
	var ents [64]overlappedEntry
	b.g.Waiters++
	b.g.Mu.Unlock()
	b.ctr.Syscalls.Add(1)
	nev, err := getQueuedCompletionStatusEx(b.port, ents[:], msTimeout(rem))
	b.g.Mu.Lock()
	b.g.Waiters--
	woke = b.handleLocked(ents[:nev])
	if err != nil {
		return false, fmt.Errorf("iocp: GetQueuedCompletionStatusEx: %w", err)
	}
	return woke, nil
}

// handleLocked processes dequeued packets and reports whether a Wake was
// observed.
func (b *Port) handleLocked(ents []overlappedEntry) (woke bool) {
	for i := range ents {
		e := &ents[i]
		switch {
		case e.key == keyWake:
			if b.g.Wake.Take() {
				b.ctr.WakeUps.Add(1)
				woke = true
			}
		case e.key == keyKick:
			b.kicked = false
		case e.key == keyForward:
			b.takeInboxLocked()
		case e.ov != nil:
			if io := (*ioBlock)(unsafe.Pointer(e.ov)); io.owner != b {
				io.owner.forward(*e) // an op of another Port on a handle homed here
				continue
			}
			b.completeIOLocked(e)
		}
	}
	return woke
}

// deliverLocked moves ready completions into out and releases their slots.
func (b *Port) deliverLocked(out []evpoll.Completion) int {
	n := slots.Deliver(&b.slots.Table, &b.ready, out)
	if n > 0 {
		b.pending.Add(-int64(n))
		b.ctr.Completed.Add(uint64(n))
	}
	return n
}

// Wake implements evpoll.Backend with PostQueuedCompletionStatus
// (coalesced until a Wait dequeues the packet).
func (b *Port) Wake() error { return slots.Wake(&b.g.Wake, (*wakePoster)(b), "iocp", &b.ctr) }

// wakePoster posts the Wake packet.
type wakePoster Port

func (p *wakePoster) Kick() { (*Port)(p).post(keyWake) }

// closeGrace bounds how long Close waits for cancelled ops' packets.
const closeGrace = 2 * time.Second

// Close implements evpoll.Backend. It cancels every op in the kernel
// (CancelIoEx) and dequeues packets until the kernel has returned them
// all, so no OVERLAPPED or buffer is dropped while the kernel may still
// write it; what does not come back within two seconds stays referenced
// for the life of the process. Handles accepted or opened for completions
// that were never returned are closed; the handles the ops named belong to
// the caller and stay open.
func (b *Port) Close() error {
	b.g.Mu.Lock()
	// Nobody may wait on the port when it is closed.
	if !slots.BeginClose((*waiter)(b)) {
		b.g.Mu.Unlock()
		return nil
	}
	for i := range int32(b.slots.Len()) {
		if s := b.slots.At(i); s.state == slotKernel {
			_ = windows.CancelIoEx(s.h, &s.io.ov)
		}
	}
	var ents [64]overlappedEntry
	for deadline := time.Now().Add(closeGrace); b.inKernel > 0 && time.Now().Before(deadline); {
		n, err := getQueuedCompletionStatusEx(b.port, ents[:], 50)
		if err != nil {
			break
		}
		b.handleLocked(ents[:n])
	}
	for _, idx := range b.ready {
		s := b.slots.At(idx)
		if k := s.op.Kind; (k == evpoll.Accept || k == evpoll.Open) && s.res >= 0 {
			h := windows.Handle(uintptr(s.res))
			if k == evpoll.Accept {
				_ = windows.Closesocket(h)
			} else {
				_ = windows.CloseHandle(h)
			}
		}
	}
	b.unregisterAllLocked()
	if b.inKernel > 0 {
		graveyard.Lock()
		graveyard.tables = append(graveyard.tables, b.slots)
		graveyard.Unlock()
	}
	b.fds, b.ready = nil, nil
	b.g.Mu.Unlock()
	b.pool.Stop()
	b.pending.Store(0)
	b.g.Wake.Mu.Lock()
	b.gone, b.inbox = true, nil // forward posts nothing to a closed handle
	b.g.Wake.Mu.Unlock()
	if err := windows.CloseHandle(b.port); err != nil {
		return fmt.Errorf("iocp: close: %w", err)
	}
	return nil
}
