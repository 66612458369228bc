package sched

import (
	"runtime"
	"sync/atomic"

	"github.com/jadevm/jade/internal/asymfence"
	"github.com/jadevm/jade/internal/relstore"
)

// bias makes a structure owner-biased: its owner changes it inside a
// section with no locked instruction, and anyone else first revokes the
// bias and waits the owner out. Used by the live-task banks
// (livebank.go) and the registry's lists (registry.go).
//
// The owner stores busy with asymfence's light store, then loads revoked,
// and touches the structure only if it is clear. A revoker stores
// revoked, runs asymfence.Heavy (once for all the biases it revokes) and
// waits for busy to clear: at least one of the two sees the other's store
// (sched/doc.go, busy / revoked). The revoker holds the structure's lock
// from revoke to unrevoke, and a revoked owner takes that lock instead.
type bias struct {
	// busy is 1 while the owner is in its section.
	busy atomic.Uint32
	// revoked is 1 while a holder of the structure's lock other than the
	// owner may change it.
	revoked atomic.Uint32
}

// enter begins the owner's section and reports whether the structure is
// the owner's; false: the bias is revoked. Either way leave ends the
// section (a revoked owner may leave at once and take the lock).
func (b *bias) enter() bool {
	asymfence.StoreUint32(&b.busy, 1)
	return b.revoked.Load() == 0
}

// leave ends the owner's section.
func (b *bias) leave() { relstore.Uint32(&b.busy, 0) }

// revoke takes the bias from the owner; the caller then runs
// asymfence.Heavy and waitOut before it touches the structure.
func (b *bias) revoke() { b.revoked.Store(1) }

// waitOut waits until the owner is out of its section. A section is a
// few instructions; its owner may have lost its thread in it, though.
func (b *bias) waitOut() {
	for spins := 0; b.busy.Load() != 0; spins++ {
		if spins >= 64 {
			runtime.Gosched()
		}
	}
}

// unrevoke gives the bias back to the owner.
func (b *bias) unrevoke() { b.revoked.Store(0) }
