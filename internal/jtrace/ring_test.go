package jtrace

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// clock is a test clock that counts its reads.
func clock() (func() int64, *atomic.Int64) {
	var n atomic.Int64
	return func() int64 { return n.Add(1) * 1000 }, &n
}

// TestFlightKeepsLast: a flight ring keeps at least the last n events,
// oldest first, and reads the clock every clockEvery events.
func TestFlightKeepsLast(t *testing.T) {
	now, reads := clock()
	r := NewFlight(0, 3000, now)
	require.Zero(t, r.Len())
	const total = 10_000
	for i := 1; i <= total; i++ {
		r.Emit(Event{Kind: KindDispatch, Task: uint64(i)})
	}
	evs := r.Snapshot(nil)
	require.Equal(t, r.Len(), len(evs))
	require.GreaterOrEqual(t, len(evs), 3000)
	require.LessOrEqual(t, len(evs), 3000+2*ChunkLen)
	for i, e := range evs {
		require.Equal(t, uint64(total-len(evs)+i+1), e.Task)
	}
	require.Equal(t, int64((total+clockEvery-1)/clockEvery), reads.Load(), "one clock read per clockEvery events")
	// Times never go back, and the exact ones carry fresh reads.
	for i := 1; i < len(evs); i++ {
		require.GreaterOrEqual(t, evs[i].Time, evs[i-1].Time)
	}
}

// TestTakeIsNext: events written through Take (falling back to Next),
// as the scheduler's hooks write them, and through Emit, with exact
// events among them, give the same ring: events, times, flags, clock
// reads and Len, in flight mode and in stream mode.
func TestTakeIsNext(t *testing.T) {
	write := func(r *Ring, take bool) {
		for i := 1; i <= 5000; i++ {
			var now int64
			if i%97 == 0 {
				now = int64(i) * 7
			}
			var e *Event
			if take && now == 0 {
				e = r.Take()
			}
			if e == nil {
				e = r.Next(now)
			}
			e.Kind, e.Task, e.Arg, e.Fn, e.PC, e.Flow, e.Reason = KindWake, uint64(i), 0, 0, 0, 0, 0
		}
	}
	for _, take := range []bool{false, true} {
		now, reads := clock()
		r := NewFlight(0, 3000, now)
		write(r, take)
		now2, reads2 := clock()
		ref := NewFlight(0, 3000, now2)
		for i := 1; i <= 5000; i++ {
			var e Event
			if i%97 == 0 {
				e.Time, e.Flags = int64(i)*7, Exact
			}
			e.Kind, e.Task = KindWake, uint64(i)
			ref.Emit(e)
		}
		require.Equal(t, ref.Len(), r.Len())
		require.Equal(t, ref.Snapshot(nil), r.Snapshot(nil), "take %v", take)
		require.Equal(t, reads2.Load(), reads.Load())
	}
	s := &sink{}
	now, _ := clock()
	r := NewStreamRing(0, s, &Chunk{}, now)
	write(r, true)
	c, dropped := r.Detach()
	require.Zero(t, dropped)
	require.Equal(t, 5000%ChunkLen, c.N)
	require.Equal(t, uint64(5000), c.Ev[c.N-1].Task)
}

// TestExactTimesReset: an exact event restarts the ring's countdown.
func TestExactTimesReset(t *testing.T) {
	now, reads := clock()
	r := NewFlight(0, 10, now)
	for i := 0; i < 100; i++ {
		r.Emit(Event{Kind: KindPark, Time: int64(i + 1), Flags: Exact})
		r.Emit(Event{Kind: KindWake})
	}
	require.Zero(t, reads.Load())
	evs := r.Snapshot(nil)
	require.Equal(t, evs[len(evs)-2].Time, evs[len(evs)-1].Time)
}

// sink is a Sink that keeps the chunks it was given.
type sink struct {
	got  []*Chunk
	none bool
}

func (s *sink) Full(c *Chunk) *Chunk {
	if c != nil {
		s.got = append(s.got, c)
	}
	if s.none {
		return nil
	}
	return new(Chunk)
}

// TestStreamHandsChunks: a stream ring hands every full chunk on, and
// counts what it drops while its sink has no chunk.
func TestStreamHandsChunks(t *testing.T) {
	now, _ := clock()
	s := &sink{}
	r := NewStreamRing(3, s, new(Chunk), now)
	for i := 0; i < 3*ChunkLen+5; i++ {
		r.Emit(Event{Kind: KindSpawn, Task: uint64(i)})
	}
	require.Len(t, s.got, 3)
	for k, c := range s.got {
		require.Equal(t, 3, c.Track)
		require.Equal(t, ChunkLen, c.N)
		require.Equal(t, uint64(k*ChunkLen), c.Ev[0].Task)
	}
	s.none = true
	for i := 0; i < ChunkLen; i++ {
		r.Emit(Event{Kind: KindSpawn})
	}
	last, dropped := r.Detach()
	require.Nil(t, last)
	require.Equal(t, uint64(5), dropped, "the events after the 4th chunk went to the sink")
	require.Len(t, s.got, 4)
}

// TestRingHammer writes a flight ring from its owner while a reader
// takes snapshots, the writer stopped at a barrier for each (the
// scheduler's stop of the world). Run with -race: the protocol needs no
// atomics in the writer.
func TestRingHammer(t *testing.T) {
	now, _ := clock()
	r := NewFlight(0, 2*ChunkLen, now)
	stop := make(chan chan struct{})
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the owner
		defer wg.Done()
		for i := uint64(1); ; i++ {
			select {
			case release := <-stop: // at the barrier
				<-release
			case <-done:
				return
			default:
			}
			r.Emit(Event{Kind: KindDispatch, Task: i})
		}
	}()
	var snap []Event
	for k := 0; k < 200; k++ {
		release := make(chan struct{})
		stop <- release // the writer is stopped once it takes this
		snap = r.Snapshot(snap[:0])
		close(release)
		for i := 1; i < len(snap); i++ {
			require.Equal(t, snap[i-1].Task+1, snap[i].Task, "a snapshot is consecutive")
		}
	}
	close(done)
	wg.Wait()
}

// TestStreamHammer: rings of several writers stream into one Stream
// while their chunks are encoded, then detach and close; every event is
// in the output.
func TestStreamHammer(t *testing.T) {
	now, _ := clock()
	var strs Strings
	fn := strs.ID("f")
	var out countWriter
	s := NewStream(&out, []string{"a", "b", "c"}, &strs)
	rings := []*Ring{s.Ring(0, now), s.Ring(1, now), s.Ring(2, now)}
	var wg sync.WaitGroup
	for _, r := range rings {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := uint64(1); i <= 20_000; i++ {
				r.Emit(Event{Kind: KindDispatch, Task: i, Fn: fn})
				r.Emit(Event{Kind: KindSliceEnd, Task: i, Fn: fn, Reason: EndComplete})
			}
		}()
	}
	wg.Wait()
	var rest []*Chunk
	var dropped uint64
	for _, r := range rings {
		c, d := r.Detach()
		rest, dropped = append(rest, c), dropped+d
	}
	require.NoError(t, s.Close(rest, now(), dropped))
	require.Zero(t, dropped)
	require.Greater(t, out.n, 3*20_000*50, "the slices were written")
}

type countWriter struct{ n int }

func (w *countWriter) Write(b []byte) (int, error) { w.n += len(b); return len(b), nil }

func TestStrings(t *testing.T) {
	var s Strings
	require.Zero(t, s.ID(""))
	a, b := s.ID("a"), s.ID("b")
	require.NotEqual(t, a, b)
	require.Equal(t, a, s.ID("a"))
	require.Equal(t, "b", s.Get(b))
	require.Equal(t, "", s.Get(99))
	require.Equal(t, []string{"", "a", "b"}, s.Snapshot())
}
