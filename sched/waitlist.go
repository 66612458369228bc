package sched

// Lists of waiters (an event's FIFO, a task's joiners) keep a Token per
// wait, and a wait that ended otherwise (a timeout, a cancel) leaves its
// token behind, stale. Removing it at that moment would cost a search of
// the list; instead a push that finds the list at its compaction limit
// first drops every stale token, and sets the next limit to twice the live
// tokens it kept (at least minCompact). A list so never holds more than
// max(minCompact, 2 × live) tokens, at an amortised O(1) per push: a
// server that waits on one event with timeouts for ever does not grow it.

// minCompact is the smallest compaction limit of a waiter list.
const minCompact = 16

// live reports whether tok still names a wait that has not ended: its
// task's wait word has tok's generation and is armed or parked.
func (k Token) live() bool {
	w := k.t.wait.Load()
	ph := w & phaseMask
	return w>>phaseBits == k.gen && (ph == phArmed || ph == phParked)
}

// waitEntry is what a waiter list holds: a Token, or an event's entry
// (evEntry).
type waitEntry interface {
	live() bool
}

// waitListOf is a FIFO of waiter entries with compaction (see above).
// The zero value is empty; the owner's mutex guards it.
type waitListOf[T waitEntry] struct {
	toks  []T
	head  int // first entry not yet taken
	limit int // compact when len(toks)-head reaches it; 0: minCompact
}

// push appends tok, first dropping stale entries when the list is at its
// limit.
func (l *waitListOf[T]) push(tok T) {
	if l.head > 0 && l.head == len(l.toks) {
		// every entry was taken, and pop cleared each: no clear here
		// (BenchmarkPingPong pushes onto an emptied list every wait)
		l.toks, l.head = l.toks[:0], 0
	}
	if n := len(l.toks) - l.head; n >= max(l.limit, minCompact) {
		kept := l.toks[:0]
		for _, k := range l.toks[l.head:] {
			if k.live() {
				kept = append(kept, k)
			}
		}
		clear(l.toks[len(kept):])
		l.toks, l.head = kept, 0
		l.limit = 2 * len(kept)
	}
	l.toks = append(l.toks, tok)
}

// pop takes the first entry; ok is false when the list is empty.
func (l *waitListOf[T]) pop() (tok T, ok bool) {
	var zero T
	if l.head == len(l.toks) {
		return zero, false
	}
	tok = l.toks[l.head]
	l.toks[l.head] = zero
	l.head++
	return tok, true
}

// takeAll returns the tokens not yet taken and empties the list.
func (l *waitListOf[T]) takeAll() []T {
	toks := l.toks[l.head:]
	l.toks, l.head, l.limit = nil, 0, 0
	return toks
}

// len returns the number of tokens held (live or stale).
func (l *waitListOf[T]) len() int { return len(l.toks) - l.head }
