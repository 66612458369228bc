package jtrace

// ChunkLen is the number of events in a Chunk: the unit a ring recycles
// (flight recorder) or hands to its Sink (a full trace).
const ChunkLen = 1024

// clockEvery is how many events a ring writes between two clock reads
// of its own when its writer passes no exact times (doc.go).
const clockEvery = 32

// Chunk is a block of events of one track, oldest first.
type Chunk struct {
	Track int // the ring's track
	N     int // events in Ev[:N]
	Ev    [ChunkLen]Event
}

// Sink takes the full chunks of a ring in stream mode (a full trace).
type Sink interface {
	// Full is given a chunk the ring will not touch again and returns
	// an empty one to write next, or nil when it has none: the ring
	// then drops events (counting them) and asks again at the next one.
	// It runs on the writer's thread and must not block.
	Full(c *Chunk) *Chunk
}

// noChunk is a stream ring's cur while its sink has no chunk for it: n
// is kept at ChunkLen, so Next takes the slow path, which drops.
var noChunk Chunk

// Ring is the event buffer of one track, written by one goroutine (its
// owner) without locks or atomics. In flight mode (NewFlight) it keeps
// the last events in a ring of chunks, overwriting the oldest; in stream
// mode (NewStreamRing) it hands every full chunk to its Sink. Readers never
// run beside the writer: Snapshot and Detach are for a stopped writer
// (doc.go, "Reading a ring").
type Ring struct {
	// All fields are the writer's (no reader runs while it writes).

	// cur is the chunk being written (&noChunk, never written, in stream
	// mode while the sink has none to give); n is how many of its events
	// are written: cur.N is set only when cur is handed on or read.
	cur *Chunk
	n   int
	// chunks is the flight ring (nil in stream mode): cur is
	// chunks[idx]; every chunk before it in ring order is full, and
	// after the first lap (wrapped) so is every chunk after it.
	chunks  []*Chunk
	idx     int
	wrapped bool
	sink    Sink
	track   int

	// last is the time of the last exact event; left counts the events
	// until the ring reads the clock itself.
	last int64
	left int
	now  func() int64

	// dropped counts the events a stream ring dropped for want of a
	// chunk; discard is where Next lets the writer fill them.
	dropped uint64
	discard Event
}

// NewFlight returns a flight-recorder ring for track that keeps at least
// the last n events (rounded up to whole chunks, plus the chunk being
// written). now is the clock events without an exact time are stamped
// from.
func NewFlight(track, n int, now func() int64) *Ring {
	k := (max(n, 1)+ChunkLen-1)/ChunkLen + 1
	r := &Ring{chunks: make([]*Chunk, k), track: track, now: now}
	for i := range r.chunks {
		r.chunks[i] = &Chunk{Track: track}
	}
	r.cur = r.chunks[0]
	return r
}

// NewStreamRing returns a ring for track that hands each full chunk to
// sink and writes into the chunk sink gives back, starting with first.
func NewStreamRing(track int, sink Sink, first *Chunk, now func() int64) *Ring {
	r := &Ring{cur: first, sink: sink, track: track, now: now}
	if first == nil {
		r.cur, r.n = &noChunk, ChunkLen
	} else {
		first.Track, first.N = track, 0
	}
	return r
}

// Next appends an event and returns it for the writer to fill in place
// (no copy of an Event per event): cleared but for Time and Flags. With
// now != 0 (a time the writer read) the event is exact at now; else its
// Time is the last exact event's, or a fresh clock read every
// clockEvery events (which makes it exact). When a stream ring has no
// chunk to write to, the event is dropped (counted): Next returns a
// scratch event that nothing reads.
func (r *Ring) Next(now int64) *Event {
	if n := r.n; now == 0 && r.left > 1 && n < ChunkLen {
		// The common case, inlined: a slot of the current chunk, no
		// clock read.
		r.left--
		r.n = n + 1
		e := &r.cur.Ev[n]
		*e = Event{Time: r.last}
		return e
	}
	return r.nextSlow(now)
}

// nextSlow is Next with a clock read or a move to the next chunk.
func (r *Ring) nextSlow(now int64) *Event {
	var f uint8
	if now != 0 {
		r.last, r.left, f = now, clockEvery, Exact
	} else if r.left--; r.left <= 0 {
		r.last, r.left, f = r.now(), clockEvery, Exact
	}
	if r.cur == &noChunk || r.n == ChunkLen {
		if !r.advance() {
			r.dropped++
			r.discard = Event{}
			return &r.discard
		}
	}
	e := &r.cur.Ev[r.n]
	r.n++
	*e = Event{Time: r.last, Flags: f}
	return e
}

// Emit appends a copy of e: exact at e.Time when e has the Exact flag,
// else timed as Next does. The common case (no clock read, room in the
// current chunk) is inlined and writes the slot with one copy of e, not
// a clearing and then a store per field as Next and a fill in place
// would (BenchmarkEmit; the flight recorder's cost on
// BenchmarkChainedSpawn/jade, scripts/trace-ab.py).
func (r *Ring) Emit(e Event) {
	if n := r.n; e.Flags == 0 && r.left > 1 && n < ChunkLen {
		r.left--
		r.n = n + 1
		e.Time = r.last
		r.cur.Ev[n] = e
		return
	}
	r.emitSlow(e)
}

// emitSlow is Emit with a clock read, an exact time or a move to the
// next chunk.
func (r *Ring) emitSlow(e Event) {
	var now int64
	if e.Flags&Exact != 0 {
		now = e.Time
	}
	p := r.nextSlow(now)
	e.Time, e.Flags = p.Time, e.Flags|p.Flags
	*p = e
}

// advance moves to the next chunk; false when a stream ring has none.
func (r *Ring) advance() bool {
	if r.chunks == nil {
		var full *Chunk
		if r.cur != &noChunk {
			full = r.cur
			full.N = r.n
		}
		c := r.sink.Full(full)
		if c == nil {
			r.cur, r.n = &noChunk, ChunkLen
			return false
		}
		r.cur, r.n = c, 0
		c.Track, c.N = r.track, 0
		return true
	}
	r.cur.N = r.n
	r.idx++
	if r.idx == len(r.chunks) {
		r.idx, r.wrapped = 0, true
	}
	r.cur, r.n = r.chunks[r.idx], 0
	return true
}

// Snapshot copies the ring's events, oldest first, into dst (appending)
// and returns it. The writer must be stopped (doc.go).
func (r *Ring) Snapshot(dst []Event) []Event {
	if r.chunks == nil {
		if r.cur != &noChunk {
			dst = append(dst, r.cur.Ev[:r.n]...)
		}
		return dst
	}
	k := len(r.chunks)
	if r.wrapped {
		for i := 1; i < k; i++ {
			c := r.chunks[(r.idx+i)%k]
			dst = append(dst, c.Ev[:ChunkLen]...)
		}
	} else {
		for i := 0; i < r.idx; i++ {
			dst = append(dst, r.chunks[i].Ev[:ChunkLen]...)
		}
	}
	return append(dst, r.cur.Ev[:r.n]...)
}

// Len returns the number of events a Snapshot would copy now. The writer
// must be stopped.
func (r *Ring) Len() int {
	if r.chunks == nil {
		if r.cur == &noChunk {
			return 0
		}
		return r.n
	}
	if r.wrapped {
		return (len(r.chunks)-1)*ChunkLen + r.n
	}
	return r.idx*ChunkLen + r.n
}

// Detach ends a stream ring: it returns the chunk being written (N set;
// nil when none) and the events dropped, and leaves the ring empty. The
// writer must be stopped, and must not write to the ring again.
func (r *Ring) Detach() (*Chunk, uint64) {
	var c *Chunk
	if r.cur != &noChunk {
		c = r.cur
		c.N = r.n
	}
	r.cur, r.n = &noChunk, ChunkLen
	return c, r.dropped
}

// Track returns the ring's track.
func (r *Ring) Track() int { return r.track }
