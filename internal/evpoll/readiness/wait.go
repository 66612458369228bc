//go:build linux || darwin || freebsd

package readiness

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/evpoll/slots"
	"golang.org/x/sys/unix"
)

// pollBatch is the most events one Poll returns.
const pollBatch = 128

// Wait implements evpoll.Backend: it delivers ready completions, or blocks
// in OS.Poll and runs the queues of the descriptors that reported edges
// (the loop shared with IOCP, slots.Wait).
func (b *Core) Wait(timeout time.Duration, out []evpoll.Completion) (int, error) {
	return slots.Wait((*waiter)(b), b.name, timeout, out)
}

// waiter is the Core as slots.Wait drives it; its methods are not the
// Core's, so a backend that embeds the Core does not export them.
type waiter Core

func (w *waiter) Gate() *slots.Gate                         { return &w.g }
func (w *waiter) DeliverLocked(out []evpoll.Completion) int { return (*Core)(w).deliverLocked(out) }
func (w *waiter) KickLocked()                               { w.os.Kick() }
func (w *waiter) Table() *slots.Table[Slot]                 { return w.slots }
func (w *waiter) CompleteLocked(idx, res int32)             { (*Core)(w).completeLocked(idx, res) }
func (w *waiter) PoolLocked(idx int32, s *Slot)             { (*Core)(w).toPoolLocked(idx, s) }
func (w *waiter) CloseLocked(idx int32, s *Slot)            { (*Core)(w).closeLocked(idx, s) }
func (w *waiter) StartLocked(idx int32, s *Slot)            { (*Core)(w).startLocked(idx, s) }

// InitLocked readies slot s for op and tok.
func (w *waiter) InitLocked(_ int32, s *Slot, op *evpoll.Op, tok evpoll.Token) error {
	*s = Slot{Op: op, Fd: op.Fd, tok: tok, state: slotActive}
	return nil
}

// PollLocked blocks in OS.Poll and runs the queues of the descriptors that
// reported edges.
func (w *waiter) PollLocked(rem time.Duration) (woke bool, err error) {
	b := (*Core)(w)
	b.g.Waiters++
	evs := b.evbufLocked()
	b.g.Mu.Unlock()
	nev, err := b.os.Poll(evs[:], rem)
	b.g.Mu.Lock()
	b.g.Waiters--
	if err != nil && !errors.Is(err, unix.EINTR) {
		b.evbufs = append(b.evbufs, evs)
		return false, fmt.Errorf("%s: %s: %w", b.name, b.pollOp, err)
	}
	woke = b.handleLocked(evs[:nev])
	b.evbufs = append(b.evbufs, evs)
	return woke, nil
}

// evbufLocked takes a free event buffer for one OS.Poll. Buffers are
// reused, one per goroutine in Poll at once: an array on Wait's stack
// would escape to the heap at every Wait, since Poll is an interface call.
func (b *Core) evbufLocked() *[pollBatch]Event {
	if n := len(b.evbufs); n > 0 {
		evs := b.evbufs[n-1]
		b.evbufs = b.evbufs[:n-1]
		return evs
	}
	return new([pollBatch]Event)
}

// deliverLocked moves ready completions into out and releases their slots.
func (b *Core) deliverLocked(out []evpoll.Completion) int {
	n := slots.Deliver(b.slots, &b.ready, out)
	if n > 0 {
		b.pending.Add(-int64(n))
		b.ctr.Completed.Add(uint64(n))
	}
	return n
}

// handleLocked runs the queues of every descriptor that reported an edge
// and consumes the wake event. It reports whether a Wake was observed.
func (b *Core) handleLocked(evs []Event) (woke bool) {
	for i := range evs {
		ev := &evs[i]
		if ev.Flags&EvWake != 0 {
			b.os.Drain()
			b.kicked = false
			if b.g.Wake.Take() {
				b.ctr.WakeUps.Add(1)
				woke = true
			}
			continue
		}
		st := b.fds[int(ev.Fd)]
		if st == nil || st.file {
			continue // closed since the event was queued
		}
		if ev.Flags&EvRead != 0 {
			b.runQueueLocked(&st.rq)
		}
		if ev.Flags&EvWrite != 0 {
			b.runQueueLocked(&st.wq)
		}
	}
	return woke
}

// runQueueLocked completes queued ops in order until one would block.
func (b *Core) runQueueLocked(q *[]int32) {
	k := 0
	for ; k < len(*q); k++ {
		idx := (*q)[k]
		res, done := b.try(b.slots.At(idx))
		if !done {
			break
		}
		b.completeLocked(idx, res)
	}
	if k > 0 {
		*q = (*q)[:copy(*q, (*q)[k:])] // keep the backing array
	}
}

// Wake implements evpoll.Backend by kicking the wake event (coalesced).
func (b *Core) Wake() error { return slots.Wake(&b.g.Wake, b.os, b.name, &b.ctr) }

// Close is the shared part of evpoll.Backend's Close: it refuses further
// calls, brings every goroutine back out of OS.Poll, unregisters the
// polled descriptors, closes the descriptors accepted or opened for
// completions that will never be returned, and stops the pool (pool jobs
// already running finish first: they are blocking system calls). The
// descriptors the ops named belong to the caller and stay open. It
// reports false when the core was already closed; the caller then closes
// its own descriptors only on true.
func (b *Core) Close() bool {
	b.g.Mu.Lock()
	// Nobody may be in OS.Poll when the OS half closes its descriptors.
	if !slots.BeginClose((*waiter)(b)) {
		b.g.Mu.Unlock()
		return false
	}
	for fd, st := range b.fds {
		if !st.file {
			b.os.Unregister(fd)
		}
	}
	for _, idx := range b.ready {
		s := b.slots.At(idx)
		if k := s.Op.Kind; (k == evpoll.Accept || k == evpoll.Open) && s.res >= 0 {
			_ = unix.Close(int(s.res))
		}
	}
	b.fds, b.ready = nil, nil
	b.g.Mu.Unlock()
	b.pool.Stop()
	b.pending.Store(0)
	return true
}

// ErrRes turns an error into a negative errno result (-EIO when err is
// not an errno).
func ErrRes(err error) int32 {
	if err == nil {
		return 0
	}
	var e unix.Errno
	if errors.As(err, &e) {
		return -int32(e)
	}
	return -int32(unix.EIO)
}

// SoError reads the outcome of a connect(2) in progress on the socket fd
// from SO_ERROR: done with a negative errno when the connect failed, not
// done while it is still in progress, and done with 0 when SO_ERROR is
// clear (the OS half then checks that the socket is connected).
func SoError(fd int) (res int32, done bool) {
	v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err != nil {
		return ErrRes(err), true
	}
	switch e := unix.Errno(v); e {
	case 0:
		return 0, true
	case unix.EINPROGRESS, unix.EALREADY, unix.EINTR:
		return 0, false
	default:
		return -int32(e), true
	}
}

// ClampBuf bounds a buffer so that its byte count fits Completion.Res.
func ClampBuf(p []byte) []byte {
	if len(p) > math.MaxInt32 {
		return p[:math.MaxInt32]
	}
	return p
}
