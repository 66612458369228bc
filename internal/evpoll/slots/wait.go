package slots

import (
	"fmt"
	"time"

	"github.com/jadevm/jade/internal/evpoll"
)

// The skeleton that the backends whose completions wait in a ready queue
// under one mutex share (the readiness core of epoll and kqueue, and
// IOCP): the Wait loop and the delivery of ready completions. io_uring
// reaps its own queue and shares only [CheckWait] and [Deadline].

// Poller is the part of a backend that [Wait] and [BeginClose] drive.
// Every method but Gate is called with the gate's mutex held.
type Poller interface {
	// Gate is the backend's mutex and close state.
	Gate() *Gate
	// DeliverLocked moves ready completions into out (see [Deliver]).
	DeliverLocked(out []evpoll.Completion) int
	// PollLocked blocks in the kernel for up to rem (-1: no bound; 0: do
	// not block) and handles what it returned. It releases the mutex
	// around the kernel call, counting itself in Gate.Waiters, and holds
	// it again when it returns. woke reports an observed Wake.
	PollLocked(rem time.Duration) (woke bool, err error)
	// KickLocked interrupts one goroutine in the kernel wait.
	KickLocked()
}

// Wait is evpoll.Backend's Wait for b: it returns ready completions, or
// blocks in b.PollLocked until some are ready, a Wake is observed or the
// timeout passes (0: poll once; < 0: no bound). name prefixes its errors
// ("epoll: wait: ...").
func Wait[B Poller](b B, name string, timeout time.Duration, out []evpoll.Completion) (int, error) {
	if err := CheckWait(name, out); err != nil {
		return 0, err
	}
	dl := NewDeadline(timeout)
	g := b.Gate()
	for {
		g.Mu.Lock()
		if g.Closed {
			g.Mu.Unlock()
			return 0, fmt.Errorf("%s: wait: %w", name, evpoll.ErrClosed)
		}
		if n := b.DeliverLocked(out); n > 0 {
			g.Mu.Unlock()
			return n, nil
		}
		rem := dl.Left()
		woke, err := b.PollLocked(rem)
		if err != nil {
			g.Mu.Unlock()
			return 0, err
		}
		n := b.DeliverLocked(out)
		g.Mu.Unlock()
		if n > 0 || woke || rem == 0 {
			return n, nil
		}
	}
}

// CheckWait returns the error of a Wait given no room for a completion.
func CheckWait(name string, out []evpoll.Completion) error {
	if len(out) == 0 {
		return fmt.Errorf("%s: wait: empty completion buffer: %w", name, evpoll.ErrInvalidOp)
	}
	return nil
}

// Deadline is the end of a Wait's timeout.
type Deadline struct {
	timeout time.Duration
	at      time.Time
}

// NewDeadline starts a Wait's timeout (0: poll; < 0: no bound).
func NewDeadline(timeout time.Duration) Deadline {
	d := Deadline{timeout: timeout}
	if timeout > 0 {
		d.at = time.Now().Add(timeout)
	}
	return d
}

// Left returns how long the Wait may still block: -1 without a bound, 0
// for a poll or once the timeout has passed.
func (d Deadline) Left() time.Duration {
	switch {
	case d.timeout < 0:
		return -1
	case d.timeout == 0:
		return 0
	}
	return max(time.Until(d.at), 0)
}

// Done is what [Deliver] reads of a finished entry (a pointer to one).
type Done[T any] interface {
	*T
	// Completion is the entry's completion.
	Completion() evpoll.Completion
	// Clear drops the entry's Go references before it is released.
	Clear()
}

// Deliver moves the completions of the first entries of ready (indices
// into t, in completion order) into out, clears and releases those
// entries, and drops them from ready. It returns how many it moved.
func Deliver[T any, P Done[T]](t *Table[T], ready *[]int32, out []evpoll.Completion) int {
	q := *ready
	n := min(len(out), len(q))
	for i, idx := range q[:n] {
		e := P(t.At(idx))
		out[i] = e.Completion()
		e.Clear()
		t.Release(idx)
	}
	if n > 0 {
		*ready = q[:copy(q, q[n:])]
	}
	return n
}
