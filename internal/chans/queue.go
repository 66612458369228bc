package chans

// ring is a growable circular queue of messages; the channel's mutex
// guards it. It grows as messages come, not to the capacity at creation,
// so a large capacity costs nothing until it is used (the memory budget
// bounds what is held).
type ring struct {
	s    []*Msg // len(s) is a power of two or 0
	head int    // index of the oldest
	n    int    // messages held
}

// keepRing is the largest ring kept when it empties (8 KiB of slots): a
// channel that fills and drains by turns, as a stream through a channel of
// capacity 1,024 does, reuses its ring rather than growing a new one from
// 8 slots each turn; a larger burst's ring is given back.
const keepRing = 1024

func (r *ring) len() int { return r.n }

func (r *ring) grow() {
	size := max(8, 2*len(r.s))
	s := make([]*Msg, size)
	for i := 0; i < r.n; i++ {
		s[i] = r.s[(r.head+i)&(len(r.s)-1)]
	}
	r.s, r.head = s, 0
}

func (r *ring) push(m *Msg) {
	if r.n == len(r.s) {
		r.grow()
	}
	r.s[(r.head+r.n)&(len(r.s)-1)] = m
	r.n++
}

func (r *ring) pushFront(m *Msg) {
	if r.n == len(r.s) {
		r.grow()
	}
	r.head = (r.head - 1) & (len(r.s) - 1)
	r.s[r.head] = m
	r.n++
}

func (r *ring) pop() (*Msg, bool) {
	if r.n == 0 {
		return nil, false
	}
	m := r.s[r.head]
	r.s[r.head] = nil
	r.head = (r.head + 1) & (len(r.s) - 1)
	r.n--
	if r.n == 0 && len(r.s) > keepRing {
		r.s, r.head = nil, 0 // a burst's ring is not kept for ever
	}
	return m, true
}

// minCompact is the smallest compaction limit of a waiter queue.
const minCompact = 16

// fifo is a queue of parked parties. A party whose wait ended otherwise
// (a timeout, a cancel) stays in it, stale, until it is popped or a push
// finds the queue at its compaction limit and drops every stale entry
// (then the limit becomes twice the live entries kept): a queue holds at
// most max(minCompact, 2 × live) entries, at an amortised O(1) per push,
// as the scheduler's waiter lists do.
type fifo[T any] struct {
	s     []T
	head  int
	limit int
}

// push appends x, first dropping the entries live reports stale (drop,
// if non-nil, runs for each) when the queue is at its limit.
func (q *fifo[T]) push(x T, live func(T) bool, drop func(T)) {
	if q.head > 0 && q.head == len(q.s) {
		clear(q.s)
		q.s, q.head = q.s[:0], 0
	}
	if n := len(q.s) - q.head; n >= max(q.limit, minCompact) {
		q.compact(live, drop)
	}
	q.s = append(q.s, x)
}

// compact drops the entries live reports stale (drop, if non-nil, runs
// for each) and sets the next limit to twice the entries kept.
func (q *fifo[T]) compact(live func(T) bool, drop func(T)) {
	var zero T
	kept := q.s[:0]
	for _, e := range q.s[q.head:] {
		if live(e) {
			kept = append(kept, e)
		} else if drop != nil {
			drop(e)
		}
	}
	for i := len(kept); i < len(q.s); i++ {
		q.s[i] = zero
	}
	q.s, q.head = kept, 0
	q.limit = 2 * len(kept)
}

func (q *fifo[T]) pop() (T, bool) {
	var zero T
	if q.head == len(q.s) {
		return zero, false
	}
	x := q.s[q.head]
	q.s[q.head] = zero
	q.head++
	return x, true
}

// anyLive reports whether an entry live reports live is queued.
func (q *fifo[T]) anyLive(live func(T) bool) bool {
	for _, e := range q.s[q.head:] {
		if live(e) {
			return true
		}
	}
	return false
}
