package slots

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jadevm/jade/internal/evpoll"
)

// WakeGate is the coalesced Wake of a [Poller] backend and its refusal
// once the backend closes.
type WakeGate struct {
	woken atomic.Bool // a Wake is outstanding: later ones are coalesced
	// Mu orders a Wake against Close: a Wake that passed the gate kicks
	// before Close tears down what the kick needs. A backend may guard
	// more of its own state with it; it is a leaf lock.
	Mu  sync.Mutex
	off bool // Close has begun: Wakes fail; guarded by Mu
}

// Kicker interrupts one goroutine blocked in the backend's kernel wait.
type Kicker interface{ Kick() }

// Wake is evpoll.Backend's Wake: the first Wake since the last one a Wait
// observed ([WakeGate.Take]) kicks k, the others are coalesced; after
// [WakeGate.Refuse] it fails with evpoll.ErrClosed. name prefixes the
// error.
func Wake[K Kicker](g *WakeGate, k K, name string, ctr *evpoll.Counters) error {
	if !g.woken.CompareAndSwap(false, true) {
		return nil
	}
	g.Mu.Lock()
	defer g.Mu.Unlock()
	if g.off {
		return fmt.Errorf("%s: wake: %w", name, evpoll.ErrClosed)
	}
	ctr.Wakes.Add(1)
	k.Kick()
	return nil
}

// Take reports whether a Wake was outstanding, and clears it: the Wait
// that dequeued the kick calls it.
func (g *WakeGate) Take() bool { return g.woken.Swap(false) }

// Refuse makes every later Wake fail.
func (g *WakeGate) Refuse() {
	g.Mu.Lock()
	g.off = true
	g.Mu.Unlock()
}

// BeginClose is the start of a [Poller] backend's Close, entered and left
// with its mutex held: it marks the backend closed, refuses further
// Wakes, and brings every goroutine out of the kernel wait (one kick may
// wake only one waiter, so it kicks again while any is left, for up to a
// second), so that nobody waits when the backend closes its kernel
// objects. It reports false when the backend was closed already.
func BeginClose[B Poller](b B) bool {
	g := b.Gate()
	if !g.markClosedLocked() {
		return false
	}
	WaitLocked(&g.Mu, func() bool {
		if g.Waiters > 0 {
			b.KickLocked()
		}
		return g.Waiters == 0
	})
	return true
}

// WaitLocked releases mu until cond holds (or a second has passed),
// polling; mu is held on entry and on return.
func WaitLocked(mu sync.Locker, cond func() bool) {
	for deadline := time.Now().Add(time.Second); !cond() && time.Now().Before(deadline); {
		mu.Unlock()
		time.Sleep(50 * time.Microsecond)
		mu.Lock()
	}
}

// Gate is the mutex and the close state that a [Poller] backend keeps
// beside its slot table: [Wait] and [BeginClose] reach them through
// Poller.Gate.
type Gate struct {
	Mu      sync.Mutex // guards Closed and Waiters, and the backend's own state it says
	Closed  bool       // Close has begun
	Waiters int        // goroutines in the kernel wait
	Wake    WakeGate
}

// markClosedLocked marks the gate closed and refuses further Wakes; false
// when it was closed already.
func (g *Gate) markClosedLocked() bool {
	if g.Closed {
		return false
	}
	g.Closed = true
	g.Wake.Refuse()
	return true
}
