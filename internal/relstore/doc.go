// Package relstore publishes a word with a release store: every store
// before it is visible to a goroutine that loads the new value, and
// nothing more.
//
// sync/atomic's Store is sequentially consistent. On amd64 that is an
// XCHG, a locked instruction: it drains the store buffer and waits for
// the cache line, about as long as 15 to 20 plain instructions in the
// scheduler's hot paths (docs/PERFORMANCE.md, "Locked instructions
// priced"). A word written by one goroutine and only read by others
// (a shared reference slot's word, a thief's own queue tail) needs release
// order alone, unless the writer then loads a word another goroutine
// stores (a store-then-load pair; those keep Store, sched/doc.go).
//
// On amd64 every plain store is a release store (total store order), and
// the gc compiler keeps a function's stores in program order and its
// earlier loads before a later store, so Uint32 is a plain MOV there.
// Under the race detector, with other compilers (gccgo's may reorder
// plain stores) and on the other architectures it is Store: the race
// detector must see the synchronisation, and arm64's Store is already
// STLR, a release store. Readers load with sync/atomic as before. So only
// a test run on amd64 without -race exercises the plain store: the
// litmus test here, and the scheduler's exactly-once and stress tests.
//
// A release store is not a fence: a load after it may be satisfied
// before the store is visible to others. Where the writer's next load is
// of a word another goroutine stores before loading this one, keep Store.
// A run queue's push is such a store (its pusher then loads the searching
// count), so it stays Store.
package relstore
