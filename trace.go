package jade

import (
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/jadevm/jade/internal/errs"
	"github.com/jadevm/jade/sched"
)

// autoDumpEvery is the least time between two automatic flight-recorder
// dumps (each stops the workers for a moment and writes some MiB).
const autoDumpEvery = int64(10 * time.Second)

// tracing is the runtime's state for automatic flight-recorder dumps.
type tracing struct {
	dir      string       // Options.FlightDir
	next     atomic.Int64 // the earliest time (Unix ns) of the next dump
	dumping  atomic.Bool  // a dump goroutine runs
	dumps    atomic.Int64 // dumps written, for the file names
	lastFile atomic.Pointer[string]
}

// StartTrace starts a full trace of the scheduler's events — each
// worker's task slices with why they ended, spawns and wakes (with
// arrows from waker to woken), steals, parks, Go hand-overs, timers, I/O
// and Go's GC cycles — written to w as Chrome trace-event JSON until
// StopTrace: open it in ui.perfetto.dev or chrome://tracing
// (docs/TRACE.md). Installing it stops the workers for a moment; it
// fails while a trace runs. Close and Shutdown leave it running:
// StopTrace after them writes it, once the workers have returned.
func (o *Observer) StartTrace(w io.Writer) error {
	r := o.r
	if err := r.bus.Scheduler().StartTrace(w); err != nil {
		return errs.Wrap("jade", "start trace", err)
	}
	return nil
}

// StopTrace ends the trace StartTrace began and writes the rest of it.
func (o *Observer) StopTrace() error {
	r := o.r
	if err := r.bus.Scheduler().StopTrace(); err != nil {
		return errs.Wrap("jade", "stop trace", err)
	}
	return nil
}

// DumpTrace writes the flight recorder's last events of every worker to
// w, in the format of StartTrace. It fails when the flight recorder is
// off (Options.FlightEvents, JADE_FLIGHT=1).
func (o *Observer) DumpTrace(w io.Writer) error {
	r := o.r
	if err := r.bus.Scheduler().DumpTrace(w); err != nil {
		return errs.Wrap("jade", "dump trace", err)
	}
	return nil
}

// reportLong is the default Options.OnLong: it logs run and, with the
// flight recorder on, starts a dump in a goroutine of its own (the
// worker that calls it must not stop the workers) unless one ran in the
// last autoDumpEvery.
func (r *Runtime) reportLong(run sched.LongRun) {
	log.Printf("jade: %v", run)
	if !r.bus.Scheduler().FlightRecorder() {
		return
	}
	now := time.Now().UnixNano()
	if next := r.tr.next.Load(); now < next || !r.tr.next.CompareAndSwap(next, now+autoDumpEvery) {
		return
	}
	if !r.tr.dumping.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer r.tr.dumping.Store(false)
		path, err := r.obs.DumpFlight()
		if err != nil {
			log.Print(err) // "jade: dump flight: ..."
			return
		}
		log.Printf("jade: flight recorder dumped to %s (open it in ui.perfetto.dev)", path)
	}()
}

// DumpFlight writes a flight-recorder dump (DumpTrace) to a new file
// jade-flight-PID-N.json in Options.FlightDir and returns its path.
func (o *Observer) DumpFlight() (string, error) {
	r := o.r
	dir := r.tr.dir
	if dir == "" {
		dir = os.TempDir()
	}
	path := filepath.Join(dir, fmt.Sprintf("jade-flight-%d-%d.json", os.Getpid(), r.tr.dumps.Add(1)))
	f, err := os.Create(path)
	if err != nil {
		return "", errs.Wrap("jade", "dump flight", err)
	}
	err = r.bus.Scheduler().DumpTrace(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", errs.Wrap("jade", "dump flight", err)
	}
	r.tr.lastFile.Store(&path)
	return path, nil
}

// LastFlightDump returns the file of the last flight-recorder dump
// DumpFlight wrote (automatic or not), or "" when none was written.
func (o *Observer) LastFlightDump() string {
	r := o.r
	if p := r.tr.lastFile.Load(); p != nil {
		return *p
	}
	return ""
}
