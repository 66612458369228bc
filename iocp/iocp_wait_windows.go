//go:build windows

package iocp

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/evpoll/slots"
	"github.com/jadevm/jade/internal/evpoll/winsock"
	"golang.org/x/sys/windows"
)

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
