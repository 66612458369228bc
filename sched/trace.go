package sched

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/jadevm/jade/internal/jtrace"
	"github.com/jadevm/jade/vmloop"
)

// The scheduler's own execution trace (package jtrace): a flight
// recorder of the last events of every worker, a full trace streamed to
// a writer, and long-slice and long-call detection.
//
// Hooks: every hook is `if w.tr != nil { w.traceX(...) }`, one load of a
// field of the worker's own and a predictable branch when tracing is
// off. w.tr (and the rings in it) are written only while the workers are
// stopped (stopWorld: each worker has passed the barrier, so every event
// it wrote happened before, and it reads the new value after the
// release) or before Start; the worker's own code is the only reader.
// Events of the host (spawns and wakes from outside the workers, Go's GC
// cycles) go to the host track under traceState.mu, looked at only when
// traceState.on is set.
//
// A hook that reads a task's fields runs while the task is the worker's
// own (before it is enqueued, parked or finished), never after another
// worker could run it or its record be reused.

// DefaultFlightEvents is the flight recorder's size per worker when
// JADE_FLIGHT=1 switches it on (Config.FlightEvents 0).
const DefaultFlightEvents = 8192

// FlightEnv names the environment variable that switches the flight
// recorder on when Config.FlightEvents is 0: "1" for
// DefaultFlightEvents per worker, or a number of events.
const FlightEnv = "JADE_FLIGHT"

// longWindow is the least time between two long-run reports (OnLong):
// one per window, the others counted (LongRun.Suppressed) and in the
// metrics.
const longWindow = int64(time.Second)

// traceStopTimeout bounds how long StartTrace, StopTrace and DumpTrace
// wait for the workers to stop (a host call holding a worker).
const traceStopTimeout = time.Second

// workerTrace is a worker's (or the host track's) tracing state. The
// rings are written by the worker only; the caches are the worker's.
type workerTrace struct {
	s      *Scheduler
	flight *jtrace.Ring // last events (the flight recorder), or nil
	stream *jtrace.Ring // a full trace in progress, or nil
	// solo is the one ring the events go to (flight or stream), nil when
	// both or neither are set (setSolo): the hooks' inlined fast path.
	solo *jtrace.Ring
	// cur is the id of the task whose slice runs or ran last: the waker
	// of the wakes made while w.inTask (its finish wakes its joiners
	// after its slice-end event).
	cur uint64
	// dispFn, dispPC locate the dispatch of the slice that runs, for the
	// end of a slice whose task completed (its frames are gone).
	dispFn uint32
	dispPC int32
	// One-entry caches of the last program's function-name ids and the
	// last task name's id.
	prog  *vmloop.Program
	fns   []uint32
	nameP *string
	name  uint32
	// red0 and host0 are the task's reductions and the worker's host-call
	// time at the dispatch: a slice that ran exactReductions or a host
	// call ends with a clock read (traceEnd).
	red0  uint64
	host0 int64
	// spawned and spawnFlow are the last task the running slice spawned
	// and not yet written (0: none): a spawn into the lifo slot cannot
	// run before the slice ends, so its event is folded into the slice's
	// end (traceSpawn, traceEnd) — one event less per spawned task.
	spawned   uint64
	spawnFlow uint32
}

// exactReductions is the reductions after which a slice's end reads the
// clock: such a slice runs for microseconds, so the read costs it under
// 1 %, and the trace shows it with its true length (doc.go of jtrace,
// "Time").
const exactReductions = 2048

// traceState is the scheduler's tracing state (Scheduler.trace).
type traceState struct {
	strs jtrace.Strings
	// progMu guards progs, the name ids of each program's functions
	// (taken by workers: never held while they are stopped).
	progMu sync.Mutex
	progs  map[*vmloop.Program][]uint32
	// flight is the flight recorder's events per worker ring (0: off);
	// set before Start, never changed.
	flight int
	// ctl serialises StartTrace and StopTrace and guards stream, the
	// full trace in progress. It is never taken by a worker, and is held
	// while the workers are stopped.
	ctl    sync.Mutex
	stream *jtrace.Stream
	// mu guards host (the host track, and its rings) and gcOn, briefly:
	// a host call on a worker may take it, so it is never held while the
	// workers are stopped.
	mu   sync.Mutex
	host *workerTrace
	gcOn bool        // a GC watch is armed (watchGC)
	on   atomic.Bool // some ring is installed: host events look
	// Long-run reports: the clock after which the next may be made, and
	// those suppressed since the last.
	longNext       atomic.Int64
	longSuppressed atomic.Uint64
}

// flightEvents normalises Config.FlightEvents: 0 takes $JADE_FLIGHT, a
// negative value is off. A count above jtrace.MaxFlightEvents is refused
// (wrapping ErrConfig), not allocated.
func flightEvents(n int) (int, error) {
	if n > jtrace.MaxFlightEvents {
		return 0, fmt.Errorf("flight recorder of %d events per worker: at most %d (%d MiB per worker); ask for fewer: %w",
			n, jtrace.MaxFlightEvents, jtrace.MaxFlightEvents*int(unsafe.Sizeof(jtrace.Event{}))>>20, ErrConfig)
	}
	if n != 0 {
		return max(n, 0), nil
	}
	v := os.Getenv(FlightEnv)
	switch v {
	case "", "0":
		return 0, nil
	case "1":
		return DefaultFlightEvents, nil
	}
	k, err := strconv.Atoi(v)
	if err != nil || k < 0 || k > jtrace.MaxFlightEvents {
		return 0, fmt.Errorf("%s=%q: want 1 or a number of events per worker up to %d: %w", FlightEnv, v, jtrace.MaxFlightEvents, ErrConfig)
	}
	return k, nil
}

// initTrace sets up the flight recorder before the workers start.
func (s *Scheduler) initTrace(events int) {
	if events <= 0 {
		return
	}
	st := &s.trace
	st.flight = events
	for _, w := range s.workers {
		w.tr = &workerTrace{s: s, flight: jtrace.NewFlight(w.id, events, nanotime)}
		w.tr.setSolo()
	}
	st.host = &workerTrace{s: s, flight: jtrace.NewFlight(len(s.workers), events, nanotime)}
	st.host.setSolo()
	st.on.Store(true)
	s.watchGC()
}

// FlightRecorder reports whether the flight recorder is on.
func (s *Scheduler) FlightRecorder() bool { return s.trace.flight > 0 }

// tracks names the trace's tracks: one per worker, then the host's.
func (s *Scheduler) tracks() []string {
	names := make([]string, len(s.workers)+1)
	for i := range s.workers {
		names[i] = "worker " + strconv.Itoa(i)
	}
	names[len(s.workers)] = "host (outside the workers), Go GC"
	return names
}

// StartTrace starts a full trace of the scheduler's events, written to
// w as Chrome trace-event JSON (open it in ui.perfetto.dev or
// chrome://tracing) until StopTrace. The workers are stopped for a
// moment to install it (as for a task dump): it fails when they do not
// stop within a second, when called from a worker, and while a trace
// runs.
func (s *Scheduler) StartTrace(w io.Writer) error {
	st := &s.trace
	st.ctl.Lock()
	defer st.ctl.Unlock()
	if st.stream != nil {
		return errors.New("sched: start trace: a trace is running")
	}
	str := jtrace.NewStream(w, s.tracks(), &st.strs)
	err := s.whileStopped(func() {
		for _, wk := range s.workers {
			if wk.tr == nil {
				wk.tr = &workerTrace{s: s}
			}
			wk.tr.stream = str.Ring(wk.id, nanotime)
			wk.tr.setSolo()
		}
	})
	if err != nil {
		str.Close(nil, nanotime(), 0)
		return fmt.Errorf("sched: start trace: %w", err)
	}
	st.mu.Lock()
	if st.host == nil {
		st.host = &workerTrace{s: s}
	}
	st.host.stream = str.Ring(len(s.workers), nanotime)
	st.host.setSolo()
	st.on.Store(true)
	s.watchGC()
	st.mu.Unlock()
	st.stream = str
	return nil
}

// StopTrace ends the trace StartTrace began and writes the rest of it.
func (s *Scheduler) StopTrace() error {
	st := &s.trace
	st.ctl.Lock()
	defer st.ctl.Unlock()
	str := st.stream
	if str == nil {
		return errors.New("sched: stop trace: no trace is running")
	}
	var rest []*jtrace.Chunk
	var dropped uint64
	detach := func(x *workerTrace) {
		if x == nil || x.stream == nil {
			return
		}
		c, d := x.stream.Detach()
		rest, dropped = append(rest, c), dropped+d
		x.stream = nil
		x.setSolo()
	}
	err := s.whileStopped(func() {
		for _, wk := range s.workers {
			detach(wk.tr)
			if st.flight == 0 {
				wk.tr = nil
			}
		}
	})
	if err != nil {
		return fmt.Errorf("sched: stop trace: %w", err)
	}
	st.mu.Lock()
	detach(st.host)
	if st.flight == 0 {
		st.host = nil
		st.on.Store(false)
	}
	st.mu.Unlock()
	st.stream = nil
	if err := str.Close(rest, nanotime(), dropped); err != nil {
		return fmt.Errorf("sched: stop trace: %w", err)
	}
	return nil
}

// DumpTrace writes the flight recorder's events — the last
// Config.FlightEvents of every worker and of the host — to w as Chrome
// trace-event JSON. It stops the workers while it copies the rings (as a
// task dump does; it fails when they do not stop within a second, or
// when called from a worker) and fails when the flight recorder is off.
func (s *Scheduler) DumpTrace(w io.Writer) error {
	st := &s.trace
	if st.flight == 0 {
		return fmt.Errorf("sched: dump trace: the flight recorder is off (set %s=1 or Config.FlightEvents)", FlightEnv)
	}
	evs := make([][]jtrace.Event, len(s.workers)+1)
	err := s.whileStopped(func() {
		for i, wk := range s.workers {
			evs[i] = wk.tr.flight.Snapshot(nil)
		}
	})
	st.mu.Lock()
	evs[len(s.workers)] = st.host.flight.Snapshot(nil)
	st.mu.Unlock()
	if err != nil {
		return fmt.Errorf("sched: dump trace: %w", err)
	}
	enc := jtrace.NewEncoder(w, s.tracks(), &st.strs)
	for i, e := range evs {
		enc.Add(i, e)
	}
	if err := enc.Close(nanotime(), 0); err != nil {
		return fmt.Errorf("sched: dump trace: %w", err)
	}
	return nil
}

// whileStopped runs f while no worker writes its rings: during a stop of
// the world, or once Shutdown's workers have all returned.
func (s *Scheduler) whileStopped(f func()) error {
	s.pauseMu.Lock()
	halted, done := s.halted, s.workersDone
	s.pauseMu.Unlock()
	if !halted {
		return s.stopWorld(traceStopTimeout, f)
	}
	select {
	case <-done: // every worker returned: their writes happened before
		f()
		return nil
	case <-time.After(traceStopTimeout):
		return ErrPauseTimeout
	}
}

// hostEvent writes e on the host track (events from outside the
// workers); only when tracing is on.
func (s *Scheduler) hostEvent(e jtrace.Event) {
	if e.Flags&jtrace.Exact == 0 {
		// Host events are few and far between: each reads the clock.
		e.Time, e.Flags = nanotime(), jtrace.Exact
	}
	st := &s.trace
	st.mu.Lock()
	if st.host != nil {
		st.host.emit(e)
	}
	st.mu.Unlock()
}
