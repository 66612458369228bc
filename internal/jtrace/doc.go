// Package jtrace records the Jade scheduler's own events — task slices
// and why they ended, spawns, wakes with their wakers, steals, the
// inject queue, parks, Go hand-overs, timers, I/O, Go's GC cycles and
// long slices — in fixed-size events kept per worker, and writes them as
// Chrome trace-event JSON, which ui.perfetto.dev and chrome://tracing
// open: one track per worker, tasks as slices, arrows from a waker to
// the dispatch it caused. Go's runtime/trace sees the worker goroutines,
// never the Jade tasks they run; this package is what sees the tasks.
// Package sched writes the events (sched/trace.go), the root package
// and cmd/jade start and dump traces (docs/TRACE.md).
//
// # Rings
//
// Each worker writes its events into a Ring of its own: chunks of
// ChunkLen events, filled in order with plain stores — no lock, no
// atomic instruction, no allocation per event (an Event is 40 bytes
// without pointers, so the garbage collector does not scan the rings).
// A ring is in one of two modes:
//
//   - Flight (NewFlight): a circle of chunks. When the chunk being
//     written is full the writer moves to the next and overwrites it, so
//     the ring holds the last (k-1)·ChunkLen to k·ChunkLen events. This
//     is the flight recorder: always on when switched on, read only when
//     someone asks.
//   - Stream (NewStreamRing, Stream.Ring): a full trace. A full chunk is
//     handed to the Sink, a Stream, which passes it over a channel to a
//     goroutine that encodes it, and gives back an empty one (recycled,
//     or new up to a bound; past the bound the chunk's events are
//     counted lost and it is written again). The encoder goroutine waits
//     on its channel between chunks: a trace of an idle runtime wakes
//     nothing (S-4), and a chunk costs the writer one channel send and
//     one receive, not one per event.
//
// # Reading a ring
//
// A reader never runs beside the writer. Snapshot, Len and Detach are
// for a writer that is stopped — the scheduler stops its workers at a
// barrier (sched's stop of the world, the one its task dump uses), and
// the barrier's channel operations order every event a worker wrote
// before the reader's copy, and the copy before the worker's next
// event. So the writer needs no per-slot sequence numbers and no
// atomics: the price is that a dump stops the workers for the time it
// takes to copy the rings (a memory copy of some MiB at most), and that
// a worker stuck in a long host call delays it (the scheduler gives up
// after a second). In stream mode the hand-over of a full chunk through
// the channel transfers it whole: the writer never touches a chunk it
// has handed on. TestRingHammer and TestStreamHammer check both under
// -race.
//
// # Time
//
// A clock read costs about as much as a short slice's whole dispatch
// (tens of nanoseconds), so an event does not read the clock by itself.
// An event is Exact when its writer passed a time it read (a park, an
// unpark, a steal, a Go hand-over, a GC cycle, an event of the host, the
// end of a slice that ran a host call or thousands of reductions, both
// ends of a slice timed for long-slice detection) or when the ring read the
// clock, which it does every clockEvery (32) events. Every other event
// carries the time of the last exact one. The Encoder spreads the
// events between two exact ones evenly over that interval, but at most
// maxSpread (1 µs) apart: a run of sub-microsecond slices shows in
// order within the microseconds it took, and a long slice, whose end is
// exact, starts within a microsecond per event after the exact event
// before it.
//
// # Output
//
// Encoder writes a trace-event file: a process "jade", one thread track
// per ring (named, in order), task slices as complete events ("X")
// named by the function they were dispatched in, with the task id and
// name, where the slice began and ended and why; parks, Go hand-overs
// and GC pauses as slices of their own; the other events as instants;
// and a v1 flow ("s" at the spawn or wake — a spawn folded into a slice
// end is shown just before that end — "f" bound to the enclosing
// slice at the dispatch) whose id joins the task and its wait
// generation (FlowID), so that no state is needed across tracks. A
// slice whose dispatch was overwritten before a dump starts at its
// track's first event (note "start not recorded"); one still running
// at the end of a trace ends there (note "running").
package jtrace
