// Package tinylock is a mutual-exclusion lock for critical sections of a
// few loads and stores, held longer only rarely: a registry shard's list
// link, and now and then a walk of the shard (a task dump, cancel-all).
//
// Lock takes it with one compare-and-swap. Unlock is a release store
// (internal/relstore), a plain store on amd64, where sync.Mutex's unlock
// is a locked add: a locked instruction costs as much as 15 to 20 plain
// ones on the spawn path (docs/PERFORMANCE.md, "Locked instructions
// priced"). A contended Lock spins briefly and then yields its goroutine
// until the lock is free, and sleeps in short naps once it has yielded
// many times (a holder walking a long list): it never parks on the lock,
// so an Unlock has no waiter to wake and needs no read-modify-write.
//
// The Lock's compare-and-swap is a full barrier, so a holder's loads after
// Lock never see older values than its predecessor's stores before
// Unlock. What a release Unlock does not give: a load after Unlock may be
// satisfied before the Unlock is visible to others. A store-then-load
// hand-off that runs through the lock (sched/doc.go) holds only where the
// other side takes the lock too.
package tinylock

import (
	"runtime"
	"sync/atomic"
	"time"

	"github.com/jadevm/jade/internal/relstore"
)

// Mutex is a tinylock: the zero value is unlocked. It must not be copied
// after first use.
type Mutex struct {
	v atomic.Uint32 // 1 while held; set by Lock's CAS, cleared by Unlock
}

// A contended Lock looks spins times between yields; after yields
// yields, it naps instead of yielding.
const (
	spins  = 64
	yields = 16
	nap    = 20 * time.Microsecond
)

// Lock takes m, waiting while another goroutine holds it.
func (m *Mutex) Lock() {
	if !m.v.CompareAndSwap(0, 1) {
		m.lockSlow()
	}
}

// lockSlow is Lock's contended path: look (loads only, so the holder's
// line is not stolen from it), then try again; yield between rounds, so a
// holder descheduled on the same thread runs, and nap once the holder has
// kept the lock through many yields, so that waiting on a long holder
// burns little CPU.
func (m *Mutex) lockSlow() {
	for round := 0; ; round++ {
		for i := 0; i < spins; i++ {
			if m.v.Load() == 0 && m.v.CompareAndSwap(0, 1) {
				return
			}
		}
		if round < yields {
			runtime.Gosched()
		} else {
			time.Sleep(nap)
		}
	}
}

// Unlock releases m. Unlocking a lock that is not held panics.
func (m *Mutex) Unlock() {
	if m.v.Load() != 1 {
		panic("tinylock: Unlock of an unlocked Mutex")
	}
	relstore.Uint32(&m.v, 0)
}
