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
	// lim is the end of the fast path's window: the slots n..lim-1 of
	// cur take the next events with no clock read and no move to another
	// chunk (at most left-1 of them, up to the chunk's end). left is
	// counted down lazily: the events written since the window opened at
	// n0 are taken from it when the slow path runs (sync). A fast path of
	// one comparison is small enough for Go to inline (Take).
	lim, n0 int
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

// MaxFlightEvents is the most events a flight-recorder ring keeps: 1 Mi
// events, 40 MiB (an Event is 40 bytes). Configurations above it are
// refused (sched.Config.FlightEvents, JADE_FLIGHT, jade run --flight)
// rather than allocated: a count of a trillion would end the process in
// the Go runtime's fatal "out of memory".
const MaxFlightEvents = 1 << 20

// NewFlight returns a flight-recorder ring for track that keeps at least
// the last min(n, MaxFlightEvents) events (rounded up to whole chunks,
// plus the chunk being written). now is the clock events without an exact
// time are stamped from.
func NewFlight(track, n int, now func() int64) *Ring {
	k := (min(max(n, 1), MaxFlightEvents)+ChunkLen-1)/ChunkLen + 1
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

// sync takes the events written in the window from left and closes it.
func (r *Ring) sync() {
	r.left -= r.n - r.n0
	r.n0, r.lim = r.n, 0
}

// setWin opens the window after n: the slots the next events may take
// without the slow path.
func (r *Ring) setWin() {
	r.n0, r.lim = r.n, 0
	if r.cur != &noChunk {
		r.lim = max(min(ChunkLen, r.n+r.left-1), 0)
	}
}

// Next appends an event and returns it for the writer to fill in place
// (no copy of an Event per event): cleared but for Time and Flags. With
// now != 0 (a time the writer read) the event is exact at now; else its
// Time is the last exact event's, or a fresh clock read every
// clockEvery events (which makes it exact). When a stream ring has no
// chunk to write to, the event is dropped (counted): Next returns a
// scratch event that nothing reads.
func (r *Ring) Next(now int64) *Event {
	if n := r.n; now == 0 && n < r.lim {
		// The common case: a slot of the window, no clock read.
		r.n = n + 1
		e := &r.cur.Ev[n]
		*e = Event{Time: r.last}
		return e
	}
	return r.nextSlow(now)
}

// nextSlow is Next with a clock read or a move to the next chunk.
func (r *Ring) nextSlow(now int64) *Event {
	r.sync()
	defer r.setWin()
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
// else timed as Next does.
func (r *Ring) Emit(e Event) {
	var now int64
	if e.Flags&Exact != 0 {
		now = e.Time
	}
	p := r.Next(now)
	t, f := p.Time, p.Flags
	*p = e
	p.Time, p.Flags = t, e.Flags|f
}

// Take is Next's common case, small enough for Go to inline into a
// writer's hook: the next slot, timed as Next does, when that takes no
// clock read and no move to another chunk; nil when not (call Next).
// The slot is not cleared: it holds an old event but for Time and Flags,
// and the writer must store every other field (which costs less than
// Next's clearing and then a store of the fields the event uses, and
// saves the call: BenchmarkTake).
func (r *Ring) Take() *Event {
	n := r.n
	if n >= r.lim {
		return nil
	}
	r.n = n + 1
	p := &r.cur.Ev[n]
	p.Time, p.Flags = r.last, 0
	return p
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
