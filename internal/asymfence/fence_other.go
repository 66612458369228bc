//go:build !linux || !amd64 || !gc || race

package asymfence

import "sync/atomic"

// Asymmetric reports whether StoreUint32 is a release store paired with a
// membarrier in Heavy: never on this platform or build (package comment).
func Asymmetric() bool { return false }

// StoreUint32 is the light side's store of *p: a swap, sequentially
// consistent and a read-modify-write (package comment: why not Store).
func StoreUint32(p *atomic.Uint32, v uint32) { p.Swap(v) }

// StoreUint64 is StoreUint32 for a 64-bit word.
func StoreUint64(p *atomic.Uint64, v uint64) { p.Swap(v) }

// fence is the word Heavy swaps.
var fence atomic.Uint32

// Heavy is the heavy side's barrier: a swap of a word nobody reads, so
// that the heavy side's store and its load are not reordered where a
// store-release followed by a load-acquire may be (package comment).
func Heavy() { fence.Swap(0) }
