//go:build linux

package uring

import (
	"fmt"

	"github.com/jadevm/jade/internal/evpoll"
)

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
