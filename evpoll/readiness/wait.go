//go:build linux || darwin || freebsd

package readiness

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/jadevm/jade/evpoll"
	"golang.org/x/sys/unix"
)

// pollBatch is the most events one Poll returns.
const pollBatch = 128

// Wait implements evpoll.Backend: it delivers ready completions, or blocks
// in OS.Poll and runs the queues of the descriptors that reported edges.
func (b *Core) Wait(timeout time.Duration, out []evpoll.Completion) (int, error) {
	if len(out) == 0 {
		return 0, fmt.Errorf("%s: wait: empty completion buffer: %w", b.name, evpoll.ErrInvalidOp)
	}
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	for {
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return 0, fmt.Errorf("%s: wait: %w", b.name, evpoll.ErrClosed)
		}
		if n := b.deliverLocked(out); n > 0 {
			b.mu.Unlock()
			return n, nil
		}
		rem := time.Duration(-1)
		switch {
		case timeout == 0:
			rem = 0
		case timeout > 0:
			if rem = time.Until(deadline); rem < 0 {
				rem = 0
			}
		}
		b.waiters++
		evs := b.evbufLocked()
		b.mu.Unlock()
		nev, err := b.os.Poll(evs[:], rem)
		b.mu.Lock()
		b.waiters--
		if err != nil && !errors.Is(err, unix.EINTR) {
			b.evbufs = append(b.evbufs, evs)
			b.mu.Unlock()
			return 0, fmt.Errorf("%s: %s: %w", b.name, b.pollOp, err)
		}
		woke := b.handleLocked(evs[:nev])
		b.evbufs = append(b.evbufs, evs)
		n := b.deliverLocked(out)
		b.mu.Unlock()
		if n > 0 || woke || rem == 0 {
			return n, nil
		}
	}
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
	n := min(len(out), len(b.ready))
	for i, idx := range b.ready[:n] {
		s := b.slots.At(idx)
		var fl uint32
		if s.cancel && s.res == -int32(unix.ECANCELED) {
			fl = evpoll.FlagCancelled
		}
		out[i] = evpoll.Completion{Token: s.tok, Res: s.res, Flags: fl}
		b.release(idx)
	}
	if n > 0 {
		b.ready = b.ready[:copy(b.ready, b.ready[n:])]
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
			if b.woken.Swap(false) {
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
func (b *Core) Wake() error {
	if !b.woken.CompareAndSwap(false, true) {
		return nil
	}
	b.wakeMu.Lock()
	defer b.wakeMu.Unlock()
	if b.wakeOff {
		return fmt.Errorf("%s: wake: %w", b.name, evpoll.ErrClosed)
	}
	b.ctr.Wakes.Add(1)
	b.os.Kick()
	return nil
}

// Close is the shared part of evpoll.Backend's Close: it refuses further
// calls, brings every goroutine back out of OS.Poll, unregisters the
// polled descriptors, closes the descriptors accepted or opened for
// completions that will never be returned, and stops the pool (pool jobs
// already running finish first: they are blocking system calls). The
// descriptors the ops named belong to the caller and stay open. It
// reports false when the core was already closed; the caller then closes
// its own descriptors only on true.
func (b *Core) Close() bool {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return false
	}
	b.closed = true
	b.wakeMu.Lock()
	b.wakeOff = true
	b.wakeMu.Unlock()
	// Nobody may be in OS.Poll when the OS half closes its descriptors.
	// One kick may wake only one waiter, so kick again while any is left.
	waitFor(&b.mu, func() bool {
		if b.waiters > 0 {
			b.os.Kick()
		}
		return b.waiters == 0
	})
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
	b.mu.Unlock()
	b.pool.Stop()
	b.pending.Store(0)
	return true
}

// waitFor releases mu until cond holds (or a second has passed), polling.
// mu is held on entry and on return.
func waitFor(mu *sync.Mutex, cond func() bool) {
	for deadline := time.Now().Add(time.Second); !cond() && time.Now().Before(deadline); {
		mu.Unlock()
		time.Sleep(50 * time.Microsecond)
		mu.Lock()
	}
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

// ClampBuf bounds a buffer so that its byte count fits Completion.Res.
func ClampBuf(p []byte) []byte {
	if len(p) > math.MaxInt32 {
		return p[:math.MaxInt32]
	}
	return p
}
