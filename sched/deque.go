package sched

import (
	"sync/atomic"

	"github.com/jadevm/jade/internal/relstore"
)

// cacheLinePad is the padding between hot shared atomics. 128 bytes covers
// the adjacent-line prefetcher of x86 and the 128-byte lines of some arm64
// parts; it is a compile-time constant on purpose (see DESIGN §4).
const cacheLinePad = 128

// localCap is the capacity of a worker's local ring.
const localCap = 256

// localQueue is a worker's run queue: a fixed ring of localCap slots, after
// Tokio's multi-thread queue (queue.rs). The owner pushes at the tail and
// pops at the head (FIFO, so a preempted task requeued at the tail runs
// behind the others, S-6); any number of thieves concurrently steal half of
// it from the head side. Overflow moves the older half to the inject queue.
//
// Indices are free-running uint32 counters (slot = index % localCap); all
// differences are taken with wrapping subtraction.
//
// head packs two indices: steal<<32 | real.
//
//   - real is the next slot to pop. The owner's pop and a thief's claim both
//     advance it by CAS.
//   - steal is the first slot a thief is still copying; steal == real when no
//     steal is in progress. A thief claims [real, real+n) by one CAS that
//     moves real and leaves steal behind, copies the slots, then releases
//     them with a second CAS that sets steal = real. At most one steal is in
//     progress (a thief seeing steal != real gives up).
//
// tail is the next free slot; only the owner writes it.
//
// Memory ordering (Go's sync/atomic operations are sequentially consistent,
// and the race detector treats them as synchronising):
//
//   - A slot is written by the owner (push) before the tail.Store that
//     publishes it; a thief reads a slot only at an index it saw below a
//     tail it loaded, so the write happens before the read.
//   - push's tail.Store stays sequentially consistent (a locked XCHG on
//     amd64, where a release store would do for the slots): it is the
//     store of the nIdle, nSearching / push pair (doc.go). The pusher
//     then loads nSearching (notify); the last searcher decrements it and
//     then loads every tail. With a plain store there both loads can miss
//     the other's store and a worker parks beside a queued task
//     (TestQueuedTaskWakesAParkedWorker).
//   - The owner writes slot i only when tail - steal < localCap, where
//     steal comes from a head.Load. A thief reading slot i keeps steal ≤ i
//     until its releasing CAS, which it does after reading (and clearing)
//     the slot, so the owner's later head.Load that lets it reuse the slot
//     happens after the thief's accesses. Hence the slots themselves are
//     plain pointers: no two accesses to one slot are ever concurrent.
//   - The owner's pop CAS moves real past slot i before the owner reads and
//     clears it; a thief only claims slots ≥ real, so it never sees slot i.
//   - A thief writes into its *own* queue only above its own tail (it is
//     that queue's owner) and publishes them with a release store of its
//     own tail (internal/relstore): no load of that pair follows it
//     before the thief's endSearch, whose locked add orders the two.
type localQueue struct {
	head atomic.Uint64 // steal<<32 | real; CAS by owner and thieves
	_    [cacheLinePad - 8]byte
	tail atomic.Uint32 // written by the owner only; read by thieves (Load)
	_    [cacheLinePad - 4]byte
	buf  [localCap]*Task
}

func unpack(h uint64) (steal, real uint32) { return uint32(h >> 32), uint32(h) }
func pack(steal, real uint32) uint64       { return uint64(steal)<<32 | uint64(real) }

// len returns the number of tasks the owner may still pop (a snapshot when
// called by another worker).
func (q *localQueue) len() int {
	_, real := unpack(q.head.Load())
	return int(q.tail.Load() - real)
}

// push appends t (owner only). When the ring is full, the older half and t
// go to overflow in one lock acquisition; when a thief is busy with the
// ring, t alone goes to overflow. The tail's store is sequentially
// consistent: it is the store of the nIdle, nSearching / push pair.
func (q *localQueue) push(t *Task, overflow *injectQueue) {
	for {
		steal, real := unpack(q.head.Load())
		tail := q.tail.Load()
		if tail-steal < localCap {
			q.buf[tail%localCap] = t
			q.tail.Store(tail + 1)
			return
		}
		if steal != real {
			// A thief is copying: the ring frees up soon, but do not wait.
			overflow.push(t)
			return
		}
		if q.pushOverflow(t, real, tail, overflow) {
			return
		}
		// A thief claimed some tasks in between: there is room now.
	}
}

// pushRel appends t with a release store of the tail, for a pusher that
// makes its wake check again after a full barrier before anything can
// hold its worker up (worker.flushPushes), and reports whether it did: a
// full ring, or one a thief is copying from, is left to push (owner
// only).
func (q *localQueue) pushRel(t *Task) bool {
	steal, _ := unpack(q.head.Load())
	if tail := q.tail.Load(); tail-steal < localCap {
		q.buf[tail%localCap] = t
		relstore.Uint32(&q.tail, tail+1)
		return true
	}
	return false
}

// pushOverflow moves the older half of a full ring plus t to overflow.
func (q *localQueue) pushOverflow(t *Task, real, tail uint32, overflow *injectQueue) bool {
	const n = localCap / 2
	if tail-real != localCap {
		panic("sched: local queue overflow of a ring that is not full")
	}
	if !q.head.CompareAndSwap(pack(real, real), pack(real+n, real+n)) {
		return false
	}
	// The claimed slots are ours now: thieves only look at ≥ real+n.
	first := q.buf[real%localCap]
	q.buf[real%localCap] = nil
	last := first
	for i := uint32(1); i < n; i++ {
		x := q.buf[(real+i)%localCap]
		q.buf[(real+i)%localCap] = nil
		last.setQnext(x)
		last = x
	}
	last.setQnext(t)
	overflow.pushList(first, t, n+1)
	return true
}

// pop takes the oldest task (owner only).
func (q *localQueue) pop() *Task {
	h := q.head.Load()
	for {
		steal, real := unpack(h)
		if real == q.tail.Load() {
			return nil
		}
		next := pack(steal, real+1)
		if steal == real {
			next = pack(real+1, real+1)
		}
		if q.head.CompareAndSwap(h, next) {
			i := real % localCap
			t := q.buf[i]
			q.buf[i] = nil
			return t
		}
		h = q.head.Load()
	}
}

// stealInto moves about half of q's tasks to dst, whose owner is the
// caller, and returns one of them to run (nil when nothing was stolen).
func (q *localQueue) stealInto(dst *localQueue) *Task {
	dstTail := dst.tail.Load()
	dstSteal, _ := unpack(dst.head.Load())
	if dstTail-dstSteal > localCap/2 {
		// Our own ring is more than half full: no room to steal into.
		return nil
	}
	n := q.stealInto2(dst, dstTail)
	if n == 0 {
		return nil
	}
	n--
	i := (dstTail + n) % localCap
	t := dst.buf[i]
	dst.buf[i] = nil
	if n > 0 {
		relstore.Uint32(&dst.tail, dstTail+n)
	}
	return t
}

// stealInto2 claims, copies and releases half of q's tasks into dst's free
// slots from dstTail; it returns how many (0: empty or another thief busy).
func (q *localQueue) stealInto2(dst *localQueue, dstTail uint32) uint32 {
	prev := q.head.Load()
	var n, first uint32
	var next uint64
	for {
		steal, real := unpack(prev)
		if steal != real {
			return 0 // another thief is copying
		}
		tail := q.tail.Load()
		n = tail - real
		n -= n / 2
		if n == 0 {
			return 0
		}
		if n > localCap/2 {
			// tail was loaded after head: a snapshot may be torn by pops
			// and pushes in between; retry with fresh values.
			prev = q.head.Load()
			continue
		}
		next = pack(steal, real+n)
		if q.head.CompareAndSwap(prev, next) {
			first = real
			break
		}
		prev = q.head.Load()
	}
	for i := uint32(0); i < n; i++ {
		src := (first + i) % localCap
		dst.buf[(dstTail+i)%localCap] = q.buf[src]
		q.buf[src] = nil
	}
	// Release: steal catches up with real (which the owner may have moved
	// by popping meanwhile).
	prev = next
	for {
		_, real := unpack(prev)
		if q.head.CompareAndSwap(prev, pack(real, real)) {
			return n
		}
		prev = q.head.Load()
	}
}
