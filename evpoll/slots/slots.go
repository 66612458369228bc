// Package slots is the generation-checked slot table the evpoll backends
// keep their in-flight ops in.
//
// A [Table] is a fixed array of entries with a free list. It is allocated
// once and never grows, so pointers into it (which a backend may hand to
// the kernel) never dangle, and the Go references an entry holds stay
// reachable until the backend releases it. Every entry carries a
// generation, bumped at release, and an entry is named by an
// [evpoll.OpID] of index | generation<<32 (generation in bits 32..62,
// never 0), so an ID that outlived its op (a late completion, a repeated
// Cancel) no longer matches.
//
// A Table does no locking: callers hold their backend's mutex.
package slots

import "github.com/jadevm/jade/evpoll"

// OpID layout and table bounds.
const (
	// IndexBits is the number of low OpID bits that hold the entry index.
	IndexBits = 32
	// IndexMask masks the entry index of an OpID.
	IndexMask = 1<<IndexBits - 1
	// GenMask masks a generation: 31 bits, so bit 63 of an OpID is never
	// set (io_uring uses it for its own user_data).
	GenMask = 1<<31 - 1
	// Max is the largest table size: indices are int32 in the free list.
	Max = 1 << 24
)

// meta is an entry's bookkeeping, kept apart from the caller's payload.
type meta struct {
	gen  uint32 // never 0
	next int32  // free-list link, -1 at the end
	used bool
}

// Table is a fixed array of n entries of type T with a free list. The
// table never clears an entry: the caller resets what it needs at Alloc
// and drops its references before Release, and may keep reusable storage
// (buffers, kernel-visible blocks) in an entry across uses.
type Table[T any] struct {
	ents   []T
	meta   []meta
	free   int32 // head of the free list, -1 when empty
	active int
}

// New returns a table of n entries (at most [Max]), all free.
func New[T any](n int) *Table[T] {
	n = min(n, Max)
	t := &Table[T]{ents: make([]T, n), meta: make([]meta, n), free: -1}
	for i := n - 1; i >= 0; i-- {
		t.meta[i] = meta{gen: 1, next: t.free}
		t.free = int32(i)
	}
	return t
}

// Alloc takes a free entry; ok is false when every entry is in use.
func (t *Table[T]) Alloc() (idx int32, e *T, ok bool) {
	idx = t.free
	if idx < 0 {
		return -1, nil, false
	}
	m := &t.meta[idx]
	t.free, m.next, m.used = m.next, -1, true
	t.active++
	return idx, &t.ents[idx], true
}

// Release frees entry idx, which must be in use, and bumps its
// generation: its OpID no longer matches.
func (t *Table[T]) Release(idx int32) {
	m := &t.meta[idx]
	m.used = false
	m.gen = (m.gen + 1) & GenMask
	if m.gen == 0 {
		m.gen = 1
	}
	m.next = t.free
	t.free = idx
	t.active--
}

// ID is the OpID of entry idx in its current generation.
func (t *Table[T]) ID(idx int32) evpoll.OpID {
	return evpoll.OpID(uint64(t.meta[idx].gen)<<IndexBits | uint64(idx))
}

// Lookup returns the entry id names, or (-1, nil) when id is invalid or
// stale (the entry was released, perhaps reused with a newer generation).
func (t *Table[T]) Lookup(id evpoll.OpID) (int32, *T) {
	idx, gen := uint64(id)&IndexMask, uint32(uint64(id)>>IndexBits)
	if idx >= uint64(len(t.ents)) {
		return -1, nil
	}
	if m := &t.meta[idx]; !m.used || m.gen != gen {
		return -1, nil
	}
	return int32(idx), &t.ents[idx]
}

// At returns entry idx, used or free.
func (t *Table[T]) At(idx int32) *T { return &t.ents[idx] }

// InUse reports whether entry idx is allocated.
func (t *Table[T]) InUse(idx int32) bool { return t.meta[idx].used }

// Len is the number of entries.
func (t *Table[T]) Len() int { return len(t.ents) }

// Active is the number of entries in use.
func (t *Table[T]) Active() int { return t.active }
