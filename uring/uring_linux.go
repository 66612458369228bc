//go:build linux

package uring

// Ring: the io_uring implementation of evpoll.Backend.

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/evpoll/readiness"
	"github.com/jadevm/jade/internal/evpoll/slots"
	"github.com/jadevm/jade/internal/evpoll/unixsock"
	"golang.org/x/sys/unix"
)

// Ring is an evpoll.Backend on one io_uring instance. See the package doc
// for the ring layout, the memory ordering and the owner-thread mode.
type Ring struct {
	mu      sync.Mutex // guards everything below up to ctr, except as noted
	r       *ring
	slots   *slotTable
	ready   []evpoll.Completion // completions reaped outside Wait (SQ-full path)
	closed  bool
	lastErr error // a deferred submission error, reported by the next Wait
	// wokePending: a wake CQE was reaped into b.ready's path, not by Wait.
	wokePending bool

	owner    bool // OwnerThread: only the owner thread enters the kernel
	ownerTid int  // that thread's id (gettid at Open)
	// remoteCancels are Cancel calls from other threads in owner mode that
	// found the SQ full; the owner turns them into SQEs at its next Wait.
	remoteCancels []evpoll.OpID
	waiters       atomic.Int32 // goroutines blocked in io_uring_enter; read without mu
	pending       atomic.Int64 // Pending()

	// Wake state. woken coalesces Wake calls until a Wait observes one.
	woken   atomic.Bool
	wakeMu  sync.Mutex // guards the waker and wakeOff against Close
	wakeOff bool
	wk      waker
	wakeBuf [8]byte // eventfd READ target: referenced by the armed SQE

	reason string
	ctr    evpoll.Counters
}

var _ evpoll.Backend = (*Ring)(nil)

// waitArg holds the EXT_ARG argument and its timespec in one heap object,
// so the pointer inside arg stays valid for the whole enter call.
type waitArg struct {
	arg getEventsArg
	ts  kernelTimespec
}

var waitArgPool = sync.Pool{New: func() any { return new(waitArg) }}

// ladders of setup flags, best first (notes §1.8, §6.1).
var (
	ownerLadder = []uint32{
		setupSingleIssuer | setupDeferTaskrun | setupCoopTaskrun | setupTaskrunFlag | setupSubmitAll,
		setupSingleIssuer | setupCoopTaskrun | setupTaskrunFlag | setupSubmitAll,
		setupCoopTaskrun | setupTaskrunFlag | setupSubmitAll,
		setupSubmitAll,
		0,
	}
	// COOP_TASKRUN is left out of the shared ladder: completions run as
	// task work on the submitting thread, and without an IPI a Go thread
	// parked in a futex would sit on them while another thread waits.
	sharedLadder = []uint32{setupSubmitAll, 0}
)

// OpenRing sets up an io_uring backend. Errors from io_uring_setup wrap the
// errno (errors.Is(err, unix.EPERM) etc.); a kernel without EXT_ARG
// (5.11) or without a needed opcode yields an error wrapping
// errors.ErrUnsupported.
func OpenRing(o Options) (*Ring, error) {
	entries := o.Entries
	if entries == 0 {
		entries = defaultEntries
	}
	ladder := sharedLadder
	if o.OwnerThread {
		ladder = ownerLadder
	}
	r, err := newRing(entries, o.CQEntries, ladder)
	if err != nil {
		return nil, err
	}
	if r.features&featExtArg == 0 || r.features&featNoDrop == 0 {
		r.close()
		return nil, fmt.Errorf("uring: setup: kernel lacks EXT_ARG/NODROP (features %#x): %w", r.features, errors.ErrUnsupported)
	}
	for _, op := range []uint8{opNop, opPollAdd, opAccept, opConnect, opRecv, opSend, opRead, opWrite, opOpenat, opClose, opAsyncCancel} {
		if !r.supported[op] {
			r.close()
			return nil, fmt.Errorf("uring: probe: opcode %d unsupported: %w", op, errors.ErrUnsupported)
		}
	}
	n := o.MaxInFlight
	if n <= 0 {
		n = defaultInFlight
	}
	b := &Ring{r: r, slots: newSlotTable(min(n, maxSlots)), owner: o.OwnerThread}
	if o.OwnerThread {
		b.ownerTid = unix.Gettid()
	}
	mode := o.Wake
	if mode == "" {
		mode = defaultWake
	}
	if mode == "msgring" && !r.supported[opMsgRing] {
		mode = "eventfd"
	}
	b.mu.Lock()
	b.wk, err = b.newWaker(mode)
	b.mu.Unlock()
	if err != nil {
		r.close()
		return nil, err
	}
	b.reason = fmt.Sprintf("io_uring sq=%d cq=%d flags=%s features=%#x wake=%s",
		r.sqEntries, r.cqEntries, setupFlagString(r.flags&setupFlagsReported), r.features, mode)
	return b, nil
}

// Name implements evpoll.Backend.
func (b *Ring) Name() string { return "io_uring" }

// Reason describes the ring: sizes, the setup flags that took, the
// feature mask and the wake mechanism.
func (b *Ring) Reason() string { return b.reason }

// SetupFlags returns the io_uring_setup flags the kernel accepted.
func (b *Ring) SetupFlags() uint32 { return b.r.flags }

// Pending implements evpoll.Backend.
func (b *Ring) Pending() int { return int(b.pending.Load()) }

// Stats implements evpoll.Backend.
func (b *Ring) Stats() evpoll.Stats { return b.ctr.Snapshot() }

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

// drainToReadyLocked moves every CQE into b.ready (Go memory), used when
// the kernel needs CQ space before it accepts more SQEs (EBUSY on kernels
// before 5.19). A goroutine blocked in the kernel would not see what was
// moved, so it is kicked through the waker.
func (b *Ring) drainToReadyLocked() {
	var buf [32]evpoll.Completion
	moved := false
	for {
		n, woke := b.reapCQLocked(buf[:])
		b.ready = append(b.ready, buf[:n]...)
		b.wokePending = b.wokePending || woke
		moved = moved || n > 0 || woke
		if n < len(buf) {
			break
		}
	}
	if moved && b.waiters.Load() > 0 {
		b.wakeMu.Lock()
		if !b.wakeOff {
			_ = b.wk.wake()
		}
		b.wakeMu.Unlock()
	}
}

// reapLocked fills out from b.ready and then the CQ, flushing a kernel CQ
// overflow list when the kernel flags one. woke reports a wake CQE.
func (b *Ring) reapLocked(out []evpoll.Completion) (n int, woke bool) {
	if len(b.ready) > 0 {
		n = copy(out, b.ready)
		b.ready = b.ready[:copy(b.ready, b.ready[n:])]
	}
	m, woke := b.reapCQLocked(out[n:])
	woke = woke || b.wokePending
	b.wokePending = false
	n += m
	b.pending.Add(-int64(n))
	b.ctr.Completed.Add(uint64(n))
	return n, woke
}

func (b *Ring) reapCQLocked(out []evpoll.Completion) (n int, woke bool) {
	r := b.r
	for n < len(out) {
		head := r.cqHeadLoc
		tail := loadAcquire(r.cqTail) // CQEs up to tail are fully written
		if head == tail {
			if !r.flagSet(sqCQOverflow) {
				break
			}
			// FEAT_NODROP kept the overflowed CQEs in a kernel list; GETEVENTS
			// moves them into the CQ now that we made room.
			b.ctr.Overflows.Add(1)
			b.ctr.Syscalls.Add(1)
			if _, err := r.enter(0, 0, enterGetEvents, nil, 0); err != nil && !errors.Is(err, unix.EINTR) {
				break
			}
			if loadAcquire(r.cqTail) == head {
				break
			}
			continue
		}
		for ; head != tail && n < len(out); head++ {
			c := r.cqes[head&r.cqMask] // copy out before releasing the entry
			switch {
			case c.UserData == udWake:
				woke = b.onWakeLocked(c) || woke
			case c.UserData&internalUD != 0:
				// ASYNC_CANCEL results and kicks carry no token; a kick only
				// made the owner come back to run remoteCancels.
			default:
				if b.completeLocked(c, &out[n]) {
					n++
				}
			}
		}
		r.cqHeadLoc = head
		storeRelease(r.cqHead, head) // hand the entries back to the kernel
	}
	return n, woke
}

// completeLocked turns the CQE of an op into its completion and releases
// the slot. A CQE whose generation does not match its slot is stale.
func (b *Ring) completeLocked(c cqe, dst *evpoll.Completion) bool {
	idx, s := b.slots.lookup(evpoll.OpID(c.UserData))
	if s == nil {
		b.ctr.Stale.Add(1)
		return false
	}
	var fl uint32
	if s.cancel && c.Res <= -errnoERESTARTSYS && c.Res >= -errnoERESTARTBLOCK {
		// A cancel interrupted a blocking wait of an io-wq worker, which
		// then ends with the kernel's internal restart code (seen from
		// an OPENAT): the op did nothing, as with any cancel.
		c.Res = -int32(errnoECANCELED)
	}
	if s.cancel && c.Res == -int32(errnoECANCELED) {
		fl |= evpoll.FlagCancelled
	}
	switch {
	case s.op.Kind == evpoll.Accept && c.Res >= 0:
		s.op.Addr = getSockaddr(&s.sock().sa)
	case s.op.Kind == evpoll.Open && c.Res >= 0:
		// The open ran with O_NONBLOCK, so that a FIFO never makes it
		// wait (unixsock.OpenFlags); the ring's reads and writes expect
		// a blocking descriptor (with O_NONBLOCK, a file without
		// non-blocking reads would fail with EAGAIN instead of going to
		// io-wq), so take it off as the kernel's own inline open does.
		if err := unixsock.ClearNonblock(int(c.Res), s.op.OpenFlags); err != nil {
			unix.Close(int(c.Res))
			c.Res = readiness.ErrRes(err)
		}
	}
	*dst = evpoll.Completion{Token: s.tok, Res: c.Res, Flags: fl}
	b.slots.release(idx)
	return true
}

// Cancel implements evpoll.Backend with IORING_OP_ASYNC_CANCEL matching the
// op's user_data. The slot (and the op's memory) stays held until the op's
// own CQE, which arrives as -ECANCELED or with the op's real result.
//
// Cancel may be called from any goroutine, also in owner mode: the SQE is
// written under the mutex (writing SQ memory is allowed from any thread;
// only io_uring_enter is reserved to the owner) and a blocked owner is
// kicked to submit it. If the SQ is full, a non-owner queues the request
// in remoteCancels, which the owner's next Wait turns into SQEs.
func (b *Ring) Cancel(id evpoll.OpID) error {
	b.mu.Lock()
	err := b.cancelOpLocked(id)
	kick := err == nil && b.startNowLocked()
	b.mu.Unlock()
	if kick {
		return b.kick()
	}
	return err
}

// errCancelNotPending is Cancel's error for an op that has finished, made
// once: the scheduler cancels the polls a select left behind at every
// dispatch after one, and most have finished (the one that ended the wait).
var errCancelNotPending = fmt.Errorf("uring: cancel: %w", evpoll.ErrNotPending)

func (b *Ring) cancelOpLocked(id evpoll.OpID) error {
	if b.closed {
		return fmt.Errorf("uring: cancel: %w", evpoll.ErrClosed)
	}
	_, s := b.slots.lookup(id)
	if s == nil {
		return errCancelNotPending
	}
	if s.cancel {
		return nil
	}
	switch err := b.cancelLocked(uint64(id)); {
	case err == errNonOwnerFull:
		b.remoteCancels = append(b.remoteCancels, id)
	case err != nil:
		return err
	}
	s.cancel = true
	b.ctr.Cancelled.Add(1)
	return nil
}

// runRemoteCancelsLocked turns queued remote Cancel calls into SQEs (owner
// thread only). Ops that finished meanwhile are skipped.
func (b *Ring) runRemoteCancelsLocked() {
	for i, id := range b.remoteCancels {
		if _, s := b.slots.lookup(id); s != nil {
			if err := b.cancelLocked(uint64(id)); err != nil {
				b.remoteCancels = b.remoteCancels[:copy(b.remoteCancels, b.remoteCancels[i:])]
				return
			}
		}
	}
	b.remoteCancels = b.remoteCancels[:0]
}

func (b *Ring) cancelLocked(ud uint64) error {
	e, err := b.sqeLocked()
	if err != nil {
		return err
	}
	e.Opcode, e.Fd, e.Addr, e.UserData = opAsyncCancel, -1, ud, udCancel
	b.r.publish()
	return nil
}

// Wait implements evpoll.Backend. It submits what Submit queued, reaps the
// CQ, and otherwise blocks in io_uring_enter(GETEVENTS|EXT_ARG) with a
// timespec. Wait(0) makes no syscall when nothing is queued, no task work
// is flagged (TASKRUN_FLAG) and the CQ is empty.
func (b *Ring) Wait(timeout time.Duration, out []evpoll.Completion) (int, error) {
	if err := slots.CheckWait("uring", out); err != nil {
		return 0, err
	}
	dl := slots.NewDeadline(timeout)
	for {
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return 0, fmt.Errorf("uring: wait: %w", evpoll.ErrClosed)
		}
		if err := b.lastErr; err != nil {
			b.lastErr = nil
			b.mu.Unlock()
			return 0, err
		}
		if len(b.remoteCancels) > 0 {
			b.runRemoteCancelsLocked()
		}
		n, woke := b.reapLocked(out)
		if n == 0 && !woke && timeout == 0 && b.needEnter() {
			// A poll: submit the queue and run deferred task work, then
			// look again.
			b.ctr.Syscalls.Add(1)
			b.r.enter(b.r.unsubmitted(), 0, enterGetEvents, nil, 0)
			n, woke = b.reapLocked(out)
		}
		if n > 0 || woke || timeout == 0 {
			b.flushLocked() // queued SQEs must not wait for the next Wait
			b.mu.Unlock()
			return n, nil
		}
		rem := dl.Left()
		if rem == 0 { // the timeout has passed
			b.flushLocked()
			b.mu.Unlock()
			return 0, nil
		}
		// Submission and the wait share one syscall. The kernel consumes at
		// most toSubmit published SQEs, so Submits from other goroutines
		// (shared mode) may continue while this one is blocked: they see
		// waiters > 0 and enter themselves.
		toSubmit := b.r.unsubmitted()
		b.waiters.Add(1)
		b.mu.Unlock()
		err := b.waitEnter(toSubmit, rem)
		b.waiters.Add(-1)
		if err != nil {
			return 0, err
		}
	}
}

// Ready reports whether a Wait(0) could return a completion without first
// submitting queued SQEs: completions moved to Go memory or in the CQ,
// flagged task work or CQ overflow, a remote cancel or an error to
// report. Without TASKRUN_FLAG (deferred task work is then invisible) it
// is always true. The worker uses it to leave queued SQEs to its parking
// Wait, which submits them and blocks in one enter (see sched's find).
func (b *Ring) Ready() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.ready) > 0 || b.lastErr != nil || len(b.remoteCancels) > 0 || b.wokePending ||
		b.r.cqHeadLoc != loadAcquire(b.r.cqTail) || b.r.flagSet(sqTaskrun|sqCQOverflow) ||
		(b.r.flags&setupDeferTaskrun != 0 && b.r.flags&setupTaskrunFlag == 0)
}

// needEnter reports whether a non-blocking enter could produce anything:
// queued SQEs, flagged task work, or a flagged CQ overflow.
func (b *Ring) needEnter() bool {
	return b.r.unsubmitted() > 0 || b.r.flagSet(sqTaskrun|sqCQOverflow) ||
		(b.r.flags&setupDeferTaskrun != 0 && b.r.flags&setupTaskrunFlag == 0)
}

// waitEnter blocks for one CQE or rem (rem < 0: no limit). ETIME, EINTR
// and EBUSY all just return to Wait's loop.
func (b *Ring) waitEnter(toSubmit uint32, rem time.Duration) error {
	wa := waitArgPool.Get().(*waitArg)
	defer waitArgPool.Put(wa)
	wa.arg = getEventsArg{}
	if rem >= 0 {
		wa.ts = durationTimespec(rem)
		wa.arg.Ts = uint64(uintptr(unsafe.Pointer(&wa.ts)))
	}
	b.ctr.Syscalls.Add(1)
	_, err := b.r.enter(toSubmit, 1, enterGetEvents|enterExtArg, unsafe.Pointer(&wa.arg), unsafe.Sizeof(wa.arg))
	switch {
	case err == nil, errors.Is(err, errnoETIME), errors.Is(err, unix.EINTR),
		errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EBUSY):
		return nil
	case errors.Is(err, unix.EBADR):
		// CQEs were dropped (only without FEAT_NODROP, which OpenRing
		// requires); report it rather than hang.
		return fmt.Errorf("uring: wait: completions dropped: %w", err)
	}
	return fmt.Errorf("uring: wait: %w", err)
}

// Close implements evpoll.Backend: it cancels every pending op, reaps
// until the kernel has returned all of them (bounded by closeGrace), then
// unmaps and closes. Ops still held by the kernel after closeGrace keep
// their memory referenced forever (see graveyard) rather than risk the
// kernel writing into freed memory.
func (b *Ring) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true // Wait returns ErrClosed; a wake CQE no longer re-arms
	b.wakeMu.Lock()
	if b.waiters.Load() > 0 {
		_ = b.wk.wake() // goroutines blocked in Wait come back
	}
	b.wakeOff = true
	b.wakeMu.Unlock()
	// No thread may be inside (or about to enter) io_uring_enter on the fd
	// when it is closed: its number could be reused by another ring.
	waitFor(&b.mu, func() bool { return b.waiters.Load() == 0 })
	b.remoteCancels = nil
	for i := range int32(b.slots.Len()) {
		if b.slots.At(i).state == slotActive {
			// A second ASYNC_CANCEL for an op already being cancelled just
			// gets -ENOENT or -EALREADY.
			_ = b.cancelLocked(uint64(b.slots.ID(i)))
		}
	}
	b.wk.cancelLocked(b)
	deadline := time.Now().Add(closeGrace)
	var buf [64]evpoll.Completion
	for {
		for n := len(buf); n == len(buf); {
			n, _ = b.reapCQLocked(buf[:]) // discarded: nobody will Wait again
		}
		if b.slots.Active() == 0 && !b.wk.busy() || time.Now().After(deadline) {
			break
		}
		if err := b.waitEnter(b.r.unsubmitted(), 10*time.Millisecond); err != nil {
			break // e.g. EEXIST: Close from a non-owner thread
		}
	}
	if b.slots.Active() > 0 || b.wk.busy() {
		graveyard.add(b.slots, b)
	}
	b.ready = nil
	b.pending.Store(0)
	err := b.wk.close()
	if e := b.r.close(); err == nil && e != nil {
		err = fmt.Errorf("uring: close: %w", e)
	}
	return err
}

const closeGrace = 2 * time.Second

// waitFor releases mu until cond holds (checked under mu) or a second
// passes. Close uses it to let blocked waiters leave.
func waitFor(mu *sync.Mutex, cond func() bool) {
	for deadline := time.Now().Add(time.Second); !cond() && time.Now().Before(deadline); {
		mu.Unlock()
		time.Sleep(50 * time.Microsecond)
		mu.Lock()
	}
}

// graveyard keeps the memory of ops the kernel would not give back at
// Close reachable for the life of the process.
var graveyard graveyardT

type graveyardT struct {
	mu   sync.Mutex
	keep []any
}

func (g *graveyardT) add(v ...any) {
	g.mu.Lock()
	g.keep = append(g.keep, v...)
	g.mu.Unlock()
}
