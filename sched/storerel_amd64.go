//go:build amd64 && !race

package sched

import (
	"sync/atomic"
	"unsafe"
)

// storeRelease publishes v in *p with release ordering: every store before
// it is visible to a goroutine that loads v. sync/atomic's Store is
// sequentially consistent, an XCHG on amd64: a locked instruction that
// drains the store buffer and waits for the line, which thieves reading a
// local queue's tail keep pulling away (BenchmarkSpawnMany at 2 workers).
// On amd64 every plain store is a release store (total store order), and
// Go's compiler keeps a function's stores in program order and its loads
// before a later store, so a plain MOV is enough. Readers still use Load.
// The race build and the other architectures take Store
// (storerel_other.go): the race detector must see the synchronisation,
// and arm64's Store is already STLR, a release store.
func storeRelease(p *atomic.Uint32, v uint32) {
	*(*uint32)(unsafe.Pointer(p)) = v
}
