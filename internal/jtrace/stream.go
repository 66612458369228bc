package jtrace

import (
	"io"
	"sync/atomic"
)

// maxStreamChunks bounds the chunks a Stream has made (about 48 MiB):
// past it, rings whose encoder falls behind drop events (counted in the
// trace's metadata) rather than grow.
const maxStreamChunks = 1024

// Stream is a full trace being written: the stream rings of its tracks
// hand it their full chunks, and a goroutine of its own encodes them to
// the writer (Chrome trace-event JSON, Encoder). The goroutine blocks on
// a channel between chunks: an idle runtime wakes nothing.
type Stream struct {
	enc  *Encoder
	full chan *Chunk // chunks to encode, from the rings' owners
	free chan *Chunk // encoded chunks to write again
	made atomic.Int64
	lost atomic.Uint64 // events of chunks the encoder had no room for
	done chan struct{}
}

// NewStream starts a trace on w with one track per name; strs names the
// functions and tasks of its events.
func NewStream(w io.Writer, tracks []string, strs *Strings) *Stream {
	s := &Stream{enc: NewEncoder(w, tracks, strs), full: make(chan *Chunk, maxStreamChunks),
		free: make(chan *Chunk, maxStreamChunks), done: make(chan struct{})}
	go s.encode()
	return s
}

// encode encodes the chunks handed over until Close.
func (s *Stream) encode() {
	defer close(s.done)
	for c := range s.full {
		s.enc.Add(c.Track, c.Ev[:c.N])
		s.free <- c // cannot block: at most maxStreamChunks exist
	}
}

// Ring returns a stream ring for track.
func (s *Stream) Ring(track int, now func() int64) *Ring {
	return NewStreamRing(track, s, s.chunk(), now)
}

// chunk returns a free chunk, or a new one while fewer than
// maxStreamChunks exist, or nil.
func (s *Stream) chunk() *Chunk {
	select {
	case c := <-s.free:
		return c
	default:
	}
	if s.made.Add(1) <= maxStreamChunks {
		return new(Chunk)
	}
	s.made.Add(-1)
	return nil
}

// Full implements Sink: c goes to the encoder (or, when it is that far
// behind, its events are counted lost and c is written again).
func (s *Stream) Full(c *Chunk) *Chunk {
	if c == nil {
		return s.chunk()
	}
	select {
	case s.full <- c:
		return s.chunk()
	default:
		s.lost.Add(uint64(c.N))
		return c
	}
}

// Close encodes the chunks the rings were detached with (Ring.Detach),
// ends the trace at time end and waits until it is written. dropped is
// what the rings dropped; the lost chunks are added. Every ring must have
// been detached, and no Full may run during or after Close.
func (s *Stream) Close(rest []*Chunk, end int64, dropped uint64) error {
	close(s.full)
	<-s.done
	for _, c := range rest {
		if c != nil {
			s.enc.Add(c.Track, c.Ev[:c.N])
		}
	}
	return s.enc.Close(end, dropped+s.lost.Load())
}
