//go:build linux

package uring

// How Wake interrupts a goroutine blocked in io_uring_enter. An eventfd
// registered with IORING_REGISTER_EVENTFD would only signal *from* the
// kernel; it does not wake a thread inside io_uring_enter. Two mechanisms
// do, both selectable (Options.Wake) and both measured by BenchmarkWake:
//
//   - msgring: a private two-entry ring (no SINGLE_ISSUER, so any goroutine
//     may submit to it under wakeMu) sends IORING_OP_MSG_RING to the
//     backend's ring, which posts a CQE with user_data udWake there. With
//     CQE_SKIP_SUCCESS the waker ring's own CQ stays empty on success.
//   - eventfd: the backend keeps an IORING_OP_READ of 8 bytes on an eventfd
//     armed in its ring; Wake writes the eventfd; the read's CQE wakes the
//     waiter and Wait re-arms it.

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/jadevm/jade/internal/evpoll"
	"golang.org/x/sys/unix"
)

// defaultWake is the mechanism Open uses when Options.Wake is empty; see
// doc.go "Wake" for the measurement.
const defaultWake = "msgring"

type waker interface {
	wake() error          // wakeMu held
	kick() error          // wakeMu held: interrupt a blocked Wait, no wake
	arm(b *Ring) error    // b.mu held: (re)arm after a wake CQE
	cancelLocked(b *Ring) // b.mu held: at Close
	busy() bool           // an SQE of ours still awaits its CQE
	close() error
}

func (b *Ring) newWaker(mode string) (waker, error) {
	switch mode {
	case "eventfd":
		fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
		if err != nil {
			return nil, fmt.Errorf("uring: eventfd: %w", err)
		}
		w := &eventfdWaker{fd: fd, one: eventfdOne}
		if err := w.arm(b); err != nil {
			unix.Close(fd)
			return nil, err
		}
		return w, nil
	case "msgring":
		wr, err := newRing(2, 0, []uint32{0})
		if err != nil {
			return nil, fmt.Errorf("uring: waker ring: %w", err)
		}
		return &msgRingWaker{wr: wr, target: b.r.fd, skip: wr.features&featCQESkip != 0}, nil
	}
	return nil, fmt.Errorf("uring: wake mode %q: %w", mode, errors.ErrUnsupported)
}

// onWakeLocked handles the CQE with user_data udWake. It reports whether
// the CQE is a real wake (a cancelled eventfd read at Close is not).
func (b *Ring) onWakeLocked(c cqe) bool {
	b.woken.Store(false) // later Wakes signal again
	if w, ok := b.wk.(*eventfdWaker); ok {
		w.armed = false
	}
	if !b.closed {
		if err := b.wk.arm(b); err != nil {
			b.lastErr = err
		}
	}
	if c.Res < 0 {
		return false
	}
	b.ctr.WakeUps.Add(1)
	return true
}

// Wake implements evpoll.Backend. Wakes coalesce: only the first Wake
// after a Wait observed the previous one makes a syscall.
func (b *Ring) Wake() error {
	if !b.woken.CompareAndSwap(false, true) {
		return nil
	}
	b.wakeMu.Lock()
	defer b.wakeMu.Unlock()
	if b.wakeOff {
		return fmt.Errorf("uring: wake: %w", evpoll.ErrClosed)
	}
	b.ctr.Wakes.Add(1)
	if err := b.wk.wake(); err != nil {
		b.woken.Store(false)
		return fmt.Errorf("uring: wake: %w", err)
	}
	return nil
}

// kick interrupts a blocked owner so that it runs queued remote cancels.
func (b *Ring) kick() error {
	b.wakeMu.Lock()
	defer b.wakeMu.Unlock()
	if b.wakeOff {
		return fmt.Errorf("uring: cancel: %w", evpoll.ErrClosed)
	}
	if err := b.wk.kick(); err != nil {
		return fmt.Errorf("uring: cancel: kick: %w", err)
	}
	return nil
}

type eventfdWaker struct {
	fd    int
	armed bool
	one   [8]byte
}

func (w *eventfdWaker) wake() error {
	_, err := unix.Write(w.fd, w.one[:])
	return err
}

// kick is a wake: an eventfd read cannot tell them apart.
func (w *eventfdWaker) kick() error { return w.wake() }

func (w *eventfdWaker) arm(b *Ring) error {
	e, err := b.sqeLocked()
	if err != nil {
		return err
	}
	e.Opcode, e.Fd, e.Off, e.UserData = opRead, int32(w.fd), noOffset, udWake
	e.Addr, e.Len = uint64(uintptr(unsafe.Pointer(&b.wakeBuf))), uint32(len(b.wakeBuf))
	b.r.publish()
	w.armed = true
	return nil
}

func (w *eventfdWaker) cancelLocked(b *Ring) {
	if w.armed {
		_ = b.cancelLocked(udWake) // the READ's CQE (-ECANCELED or a wake) clears armed
	}
}

// busy: the armed READ references b.wakeBuf until its CQE.
func (w *eventfdWaker) busy() bool { return w.armed }

func (w *eventfdWaker) close() error {
	if err := unix.Close(w.fd); err != nil {
		return fmt.Errorf("uring: close eventfd: %w", err)
	}
	return nil
}

type msgRingWaker struct {
	wr     *ring
	target int
	skip   bool
}

func (w *msgRingWaker) wake() error { return w.send(udWake) }
func (w *msgRingWaker) kick() error { return w.send(udKick) }

// send posts a CQE with user_data ud to the target ring.
func (w *msgRingWaker) send(ud uint64) error {
	e := w.wr.nextSQE()
	if e == nil {
		return errors.New("waker ring full")
	}
	e.Opcode, e.Fd, e.Addr, e.Off = opMsgRing, int32(w.target), msgRingData, ud
	if w.skip {
		e.Flags = sqeCQESkipSuccess
	}
	w.wr.publish()
	for {
		_, err := w.wr.enter(1, 0, 0, nil, 0)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
	// MSG_RING runs inline; a failure (or, without CQE_SKIP, the success)
	// is already in the waker's CQ.
	var firstErr error
	for head, tail := w.wr.cqHeadLoc, loadAcquire(w.wr.cqTail); head != tail; head++ {
		if c := w.wr.cqes[head&w.wr.cqMask]; c.Res < 0 && firstErr == nil {
			firstErr = unix.Errno(-c.Res)
		}
		w.wr.cqHeadLoc = head + 1
		storeRelease(w.wr.cqHead, head+1)
	}
	return firstErr
}

func (w *msgRingWaker) arm(*Ring) error    { return nil }
func (w *msgRingWaker) cancelLocked(*Ring) {}
func (w *msgRingWaker) busy() bool         { return false }
func (w *msgRingWaker) close() error       { return w.wr.close() }
