//go:build !linux || !amd64 || !gc || race

package asymfence

import "sync/atomic"

// Asymmetric reports whether StoreUint32 is a release store paired with a
// membarrier in Heavy: never on this platform or build (package comment).
func Asymmetric() bool { return false }

// StoreUint32 is the light side's store of *p: Store, sequentially
// consistent.
func StoreUint32(p *atomic.Uint32, v uint32) { p.Store(v) }

// Heavy is the heavy side's barrier: nothing, as the light side's store is
// sequentially consistent here.
func Heavy() {}
