// Package slots is the generation-checked slot table the evpoll backends
// keep their in-flight ops in, and the skeleton that the backends whose
// completions wait in a ready queue under one mutex (the readiness core of
// epoll and kqueue, and IOCP) share around it: [Submit], the [Wait] loop,
// [Deliver], the coalesced Wake ([WakeGate]) and the start of Close
// ([BeginClose]). A backend plugs in through [Submitter], whose methods it
// implements on an unexported type so that they stay out of its API.
//
// A [Table] holds up to a maximum number of entries, given to [New], with
// a free list. It grows lazily, one chunk of [ChunkSize] entries at a
// time, when every entry allocated so far is in use, so a table with a
// large maximum costs nothing until ops are submitted and then about what
// its peak use needs. A chunk is never moved or freed while the table
// lives: pointers into an entry (which a backend may hand to the kernel:
// sockaddrs, socklen words, paths) never dangle, and the Go references an
// entry holds stay reachable until the backend releases it. The table
// never shrinks. Every entry carries a generation, bumped at release, and
// an entry is named by an [evpoll.OpID] of index | generation<<32
// (generation in bits 32..62, never 0), so an ID that outlived its op (a
// late completion, a repeated Cancel) no longer matches.
//
// Alloc, Release and Lookup take constant time and allocate nothing,
// except the Alloc that adds a chunk. A Table does no locking: callers
// hold their backend's mutex.
package slots

import "github.com/jadevm/jade/internal/evpoll"

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

// Chunk geometry: entries are allocated ChunkSize at a time.
const (
	chunkBits = 8
	// ChunkSize is the number of entries a table adds when it grows.
	ChunkSize = 1 << chunkBits
	chunkMask = ChunkSize - 1
)

// meta is an entry's bookkeeping, kept apart from the caller's payload.
type meta struct {
	gen  uint32 // never 0
	next int32  // free-list link, -1 at the end
	used bool
}

// chunk is ChunkSize consecutive entries, allocated once and never moved.
// Of the last chunk of a table whose maximum is not a multiple of
// ChunkSize, only the entries below the maximum are ever used.
type chunk[T any] struct {
	ents [ChunkSize]T
	meta [ChunkSize]meta
}

// Table is a lazily grown array of at most max entries of type T with a
// free list. The table never clears an entry: the caller resets what it
// needs at Alloc and drops its references before Release, and may keep
// reusable storage (buffers, kernel-visible blocks) in an entry across
// uses.
type Table[T any] struct {
	chunks []*chunk[T] // chunk i holds indices i*ChunkSize ...
	n      int         // entries usable: min(len(chunks)*ChunkSize, max)
	max    int
	free   int32 // head of the free list, -1 when empty
	active int
}

// New returns an empty table that grows up to n entries (at most [Max]).
// It allocates no entry until the first Alloc.
func New[T any](n int) *Table[T] {
	return &Table[T]{max: max(min(n, Max), 0), free: -1}
}

// grow adds one chunk and puts its entries on the free list, lowest index
// first. It reports false when the table already has max entries.
func (t *Table[T]) grow() bool {
	base := t.n
	k := min(ChunkSize, t.max-base)
	if k <= 0 {
		return false
	}
	c := new(chunk[T])
	for i := k - 1; i >= 0; i-- {
		c.meta[i] = meta{gen: 1, next: t.free}
		t.free = int32(base + i)
	}
	t.chunks = append(t.chunks, c)
	t.n += k
	return true
}

// slot returns the payload and bookkeeping of entry idx, which must be
// below Len.
func (t *Table[T]) slot(idx int32) (*T, *meta) {
	c := t.chunks[idx>>chunkBits]
	i := idx & chunkMask // within the arrays: no bounds check
	return &c.ents[i], &c.meta[i]
}

// Alloc takes a free entry, growing the table when every allocated entry
// is in use; ok is false when the table holds its maximum and all of it
// is in use.
func (t *Table[T]) Alloc() (idx int32, e *T, ok bool) {
	if t.free < 0 && !t.grow() {
		return -1, nil, false
	}
	idx = t.free
	e, m := t.slot(idx)
	t.free, m.next, m.used = m.next, -1, true
	t.active++
	return idx, e, true
}

// Release frees entry idx, which must be in use, and bumps its
// generation: its OpID no longer matches.
func (t *Table[T]) Release(idx int32) {
	_, m := t.slot(idx)
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
	_, m := t.slot(idx)
	return evpoll.OpID(uint64(m.gen)<<IndexBits | uint64(idx))
}

// Lookup returns the entry id names, or (-1, nil) when id is invalid or
// stale (the entry was released, perhaps reused with a newer generation).
func (t *Table[T]) Lookup(id evpoll.OpID) (int32, *T) {
	idx, gen := uint64(id)&IndexMask, uint32(uint64(id)>>IndexBits)
	if idx >= uint64(t.n) {
		return -1, nil
	}
	e, m := t.slot(int32(idx))
	if !m.used || m.gen != gen {
		return -1, nil
	}
	return int32(idx), e
}

// At returns entry idx, used or free; idx must be below Len.
func (t *Table[T]) At(idx int32) *T {
	e, _ := t.slot(idx)
	return e
}

// InUse reports whether entry idx, which must be below Len, is allocated.
func (t *Table[T]) InUse(idx int32) bool {
	_, m := t.slot(idx)
	return m.used
}

// Len is the number of entries allocated so far, used or free: indices
// 0 to Len-1 are valid for At and InUse. It only grows.
func (t *Table[T]) Len() int { return t.n }

// Cap is the most entries the table may grow to, the n given to New
// (bounded by [Max]).
func (t *Table[T]) Cap() int { return t.max }

// Active is the number of entries in use.
func (t *Table[T]) Active() int { return t.active }
