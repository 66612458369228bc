//go:build linux

package uring

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/evpoll/readiness"
	"github.com/jadevm/jade/internal/evpoll/slots"
	"github.com/jadevm/jade/internal/evpoll/unixsock"
	"golang.org/x/sys/unix"
)

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
