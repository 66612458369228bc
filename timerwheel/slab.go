package timerwheel

import "sync/atomic"

// Handle names one pending timer of one Wheel: the entry's slab index in the
// low 32 bits and its generation in the high 32 bits. It is a plain value,
// never a Go pointer, so holding millions of them costs the GC nothing.
//
// Generations are odd while an entry is pending and even once it has fired,
// been cancelled or been freed; every transition bumps the generation, so a
// Handle whose timer is gone is stale forever (until the 32-bit counter of
// that slot wraps, after 2^31 reuses of the same slot). The zero Handle is
// never valid. A Handle only means something to the Wheel that issued it:
// the scheduler stores (shard, Handle) pairs.
type Handle uint64

func makeHandle(idx, gen uint32) Handle { return Handle(uint64(gen)<<32 | uint64(idx)) }

func (h Handle) index() uint32 { return uint32(h) }
func (h Handle) gen() uint32   { return uint32(h >> 32) }

// entry is one timer. 48 bytes; it lives in a page of the slab and never
// moves, so a foreign goroutine may touch its two atomic fields through the
// published page directory while the owner works on the rest.
type entry struct {
	deadline int64  // exact deadline, ns on the caller's monotonic clock
	payload  uint64 // opaque to the wheel (the scheduler's wake token)
	seq      uint64 // insertion order; ties in deadline fire in seq order
	next     int32  // slot list / free list link, nilIdx terminates
	prev     int32  // slot list back link
	// gen is the entry's generation: odd = pending, even = dead. Written by
	// the owner (alloc) and by whoever wins the pending→dead CAS (fire,
	// Cancel, CancelRemote); read by anyone.
	gen atomic.Uint32
	// clink links the entry into the remote-cancel stack (index+1, 0 ends
	// the stack). Written only by the remote canceller that won the gen CAS,
	// read by the owner after popping the stack.
	clink atomic.Uint32
	// where is the slot id (level*SlotsPerLevel + slot) the entry is linked
	// into, or one of the where* markers. Owner only.
	where uint16
	// parked marks an entry filed in the top level short of its true tick
	// (beyond the wheel's range). Owner only.
	parked bool
}

const (
	nilIdx int32 = -1

	whereNone uint16 = 0xfffe // unlinked: awaiting delivery or remote-cancel drain
	whereFree uint16 = 0xffff // on the free list

	pageShift = 9
	pageSize  = 1 << pageShift // 512 entries × 48 B = 24 KiB, an exact size class
	pageMask  = pageSize - 1

	// maxEntries keeps slab indices inside int32 links.
	maxEntries = 1<<31 - 1
)

type page [pageSize]entry

// pageDir is the published, immutable view of the slab's pages used by
// remote cancels. Pages never move and are never freed, so an old directory
// stays valid for every index it covers.
type pageDir struct{ pages []*page }

// slab is an index-addressed arena of entries with an intrusive free list.
// Owner only, except for the published directory.
type slab struct {
	pages []*page
	n     uint32 // high-water mark: indices [0, n) have been handed out
	free  int32  // head of the free list

	_ [cacheLinePad]byte // keep remote readers of dir off the owner's line
	// dir is read by remote cancellers; it shares its cache line with
	// Wheel.cancelTop, which follows the slab.
	dir atomic.Pointer[pageDir]
}

// cacheLinePad separates fields written by different goroutines (128 bytes
// covers adjacent-line prefetch).
const cacheLinePad = 128

func (s *slab) at(idx uint32) *entry { return &s.pages[idx>>pageShift][idx&pageMask] }

// alloc returns a dead entry, made pending (odd generation).
func (s *slab) alloc() (uint32, *entry) {
	var idx uint32
	if s.free != nilIdx {
		idx = uint32(s.free)
		e := s.at(idx)
		s.free = e.next
		e.gen.Store(e.gen.Load() + 1)
		return idx, e
	}
	if s.n == maxEntries {
		panic("timerwheel: insert: slab full (2^31-1 pending timers)")
	}
	idx = s.n
	if int(idx>>pageShift) == len(s.pages) {
		s.pages = append(s.pages, new(page))
		s.dir.Store(&pageDir{pages: s.pages})
	}
	s.n++
	e := s.at(idx)
	e.gen.Store(e.gen.Load() + 1)
	return idx, e
}

// release puts a dead entry (even generation) back on the free list.
func (s *slab) release(idx uint32, e *entry) {
	e.where = whereFree
	e.prev = nilIdx
	e.next = s.free
	s.free = int32(idx)
}

// remoteAt resolves idx through the published directory; safe from any
// goroutine. It returns nil for an index this slab never handed out.
func (s *slab) remoteAt(idx uint32) *entry {
	d := s.dir.Load()
	if d == nil {
		return nil
	}
	p := idx >> pageShift
	if p >= uint32(len(d.pages)) {
		return nil
	}
	return &d.pages[p][idx&pageMask]
}
