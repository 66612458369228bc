package sched

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/vmloop"
)

// Action tells a worker what to do after the dispatcher handled an
// intrinsic request.
type Action uint8

// Actions.
const (
	// ActContinue: the request completed; keep running the task.
	ActContinue Action = iota
	// ActYield: requeue the task behind the other runnable tasks.
	ActYield
	// ActSuspend: the task armed a wait (through Control); park it. When it
	// is woken the worker calls Dispatcher.Resume before running it.
	ActSuspend
	// ActThrown: a Raise was not caught; the task fails with Exec.Thrown.
	ActThrown
	// ActTrapped: SetTrap was called; the task traps.
	ActTrapped
	// ActMore: the request is not complete and has more bounded steps to
	// do (a spawn whose arguments are copied in steps: ErrSpawnMore; a
	// join whose result is imported in steps). Intrinsic and Resume may
	// answer it. The worker dispatches the request again (Intrinsic)
	// while the slice's budget lasts, then in the task's next slices,
	// before the task runs again.
	ActMore
)

// Dispatcher receives every intrinsic request of every task. The RuntimeBus
// implements it, so requests from bytecode pass the same capability checks
// as the host's (S-16, S-20). It runs on the worker thread and must not
// block: waits go through Control's Await*/EventWait and ActSuspend.
type Dispatcher interface {
	// Intrinsic handles the pending request of t (Control.Exec(t).Request()).
	Intrinsic(t *Task, req *vmloop.Request) Action
	// Resume completes the request of a task that was woken after
	// ActSuspend (e.g. reads the joined task's outcome).
	Resume(t *Task, req *vmloop.Request) Action
	// Abandon releases what the wake of a suspended request delivered to
	// t when t was cancelled after that wake won and before it resumed
	// (it ends Cancelled without running again): an accepted or opened
	// descriptor is closed, a host result dropped, and with signalled
	// (the wake was an event's signal) the signal goes on to the event's
	// next waiter. Waits that carry nothing (joins, sleeps) need nothing.
	Abandon(t *Task, req *vmloop.Request, signalled bool)
}

// Config configures a scheduler.
type Config struct {
	// Workers is the number of worker threads. Each is a goroutine locked
	// to its OS thread. 0 means runtime.GOMAXPROCS(0) − 1 (at least 1):
	// GOMAXPROCS follows the affinity mask and cgroup limits, and one P is
	// kept for host goroutines, the GC and the poller. Start raises
	// GOMAXPROCS to at least Workers + 1 and says so in Note.
	Workers int
	// PinCPUs pins worker i's thread to the i-th CPU (mod their number) of
	// the process's affinity mask, with sched_setaffinity. Linux only;
	// elsewhere it is a documented no-op.
	PinCPUs bool
	// Dispatcher handles intrinsic requests (required).
	Dispatcher Dispatcher
	// OpenIO opens the completion backend of worker i. It is called on the
	// worker's locked OS thread when the worker starts (an io_uring ring
	// with owner-thread flags belongs to that thread), and the backend is
	// closed there when the worker stops. Nil: no I/O (the I/O intrinsics
	// throw). An error leaves that worker without I/O and is reported by
	// the operations that need it.
	OpenIO func(worker int) (evpoll.Backend, error)
	// CloseFD closes a descriptor directly (Control.CloseFD); nil: such
	// descriptors are only forgotten by the backends.
	CloseFD func(fd int)
	// LatencySample: one enqueue in LatencySample is timestamped for the
	// run-queue and wake latency histograms (Metrics.Engines[i].Latency).
	// 0 means DefaultLatencySample, 1 every enqueue, a negative value
	// none (metrics_lat.go says what a stamp costs).
	LatencySample int
	// FlightEvents switches the flight recorder on: each worker keeps
	// its last FlightEvents events (at least; trace.go) for DumpTrace.
	// 0 takes $JADE_FLIGHT (off when unset), a negative value is off;
	// more than jtrace.MaxFlightEvents is an error wrapping ErrConfig.
	FlightEvents int
	// OnLong receives the long slices and host calls of engines that set
	// LongSlice or LongCall, at most one per second (the rest are
	// counted). It runs on the worker that ran the task: it must not
	// block (hand a dump to a goroutine).
	OnLong func(LongRun)
}

// Scheduler runs tasks on workers. Its exported methods only read; every
// mutation goes through Control, which only the RuntimeBus holds (S-16).
type Scheduler struct {
	disp    Dispatcher
	openIO  func(int) (evpoll.Backend, error)
	closeFn func(int)
	workers []*worker
	pin     bool

	_      [cacheLinePad]byte
	inject injectQueue
	_      [cacheLinePad]byte

	// nSearching counts workers looking for work to steal (at most half of
	// them, Tokio's rule); a producer wakes a parked worker only when none
	// searches, and the last searcher to find work wakes another.
	// Invariant: every count is given back by a worker that runs on — its
	// own (endSearch, sleep), or the one notify made for a woken worker,
	// which that worker takes over in unidle; a count whose worker never
	// comes back from its park stops every later wake (doc.go).
	nSearching atomic.Int32
	_          [cacheLinePad - 4]byte
	// nIdle is len(idle), readable without the lock.
	nIdle atomic.Int32
	_     [cacheLinePad - 4]byte

	idleMu sync.Mutex
	idle   []*worker // parked workers; guarded by idleMu

	// kick is set while an outside wake found every worker busy and asked
	// one of them to end its slice early (kickOne); cleared by the worker
	// that next takes from the inject queue, so a burst of outside wakes
	// preempts one slice, not one per wake.
	kick atomic.Bool
	_    [cacheLinePad - 1]byte
	// kickNext rotates the worker kickOne asks first; kicks counts the
	// slices ended early that way (metrics).
	kickNext atomic.Uint32
	kicks    atomic.Uint64

	// stall is how workers fire the timers of a stalled peer (stall.go).
	stall stallState

	// sampler is the CPU sampler while one is installed (profile.go);
	// sampleBusy is RequestSamples' scratch, guarded by idleMu.
	sampler    atomic.Pointer[samplerBox]
	sampleBusy []bool

	// latEvery is Config.LatencySample normalised (0: off); hostTicks
	// counts the enqueues from outside the workers for its sampling
	// (metrics_lat.go).
	latEvery  int32
	hostTicks atomic.Uint32

	// trace is the tracing state (trace.go); onLong is Config.OnLong.
	trace  traceState
	onLong func(LongRun)

	// pause is the last stop of the world (metrics_stacks.go), nil when
	// none or once Shutdown stops the workers; pauseMu serialises pauses
	// and that stop, and guards halted (set when Shutdown stops the
	// workers) and workersDone.
	pauseMu sync.Mutex
	pause   atomic.Pointer[pauseState]
	halted  bool
	// workersDone is closed once every worker has returned after
	// Shutdown stopped them (nil before); guarded by pauseMu.
	workersDone chan struct{}

	note       string // what Start changed (GOMAXPROCS); guarded by mu
	setProcs   int    // GOMAXPROCS value Start set, or 0; guarded by mu
	savedProcs int    // GOMAXPROCS before Start raised it; guarded by mu

	// Counters every spawn, park and completion updates, from any worker:
	// each on its own line. nextTask is the last task id handed out, to
	// the host one at a time and to workers in blocks (worker.newID).
	nextTask atomic.Uint64
	_        [cacheLinePad - 8]byte
	waiting  atomic.Int64 // tasks parked in Waiting
	_        [cacheLinePad - 8]byte

	nextEngine atomic.Uint32

	mu     sync.Mutex
	zeroCh chan struct{} // closed when no task is live; guarded by mu
	// draining is set while zeroCh is open (Drain waits): only then does
	// finish look whether the last task ended. Read by every finish,
	// written under mu. drainers counts the Drains waiting on zeroCh; the
	// last to give up (its context ended) closes the wait, so that a
	// timed-out Drain does not leave every later completion looking.
	draining atomic.Bool
	drainers int       // guarded by mu
	engines  []*Engine // guarded by mu
	started  bool      // guarded by mu
	stopping atomic.Bool
	wg       sync.WaitGroup

	// hostLaunches counts host spawns between their stopping check and
	// their registration (prepare, Launch); written by every host spawn,
	// so on a line of its own, away from draining and stopping.
	_            [cacheLinePad]byte
	hostLaunches atomic.Int64

	// The registry's lists (each on lines of its own) share no line
	// with hostLaunches.
	_        [cacheLinePad]byte
	registry registry // live tasks, for introspection and forced shutdown

	// spinLooks is how many times a worker that found no work looks again
	// before it parks, while another worker runs (looksFor; set by New).
	spinLooks int

	// transit holds the descriptors handed over to a receiver not known
	// yet (fd_transit.go).
	transit transitSet

	// spares moves recycled task records between workers in batches
	// (newTask, recycle): on its own line, away from the registry.
	_      [cacheLinePad]byte
	spares taskSpares
}

// Control holds the scheduler's mutating entry points. New returns it to
// its creator (the RuntimeBus), which must not hand it out; a test checks
// that no other package calls it.
type Control struct{ s *Scheduler }

// New creates a scheduler and its Control. Workers start with Start.
func New(cfg Config) (*Scheduler, *Control, error) {
	if cfg.Dispatcher == nil {
		return nil, nil, errors.New("sched: new: a Dispatcher is required")
	}
	if cfg.Workers == 0 {
		if _, err := envWorkers(); err != nil {
			return nil, nil, fmt.Errorf("sched: new: %w: %w", err, ErrConfig)
		}
		cfg.Workers = DefaultWorkers()
	}
	if cfg.Workers < 0 || cfg.Workers > maxWorkers {
		return nil, nil, fmt.Errorf("sched: new: %d workers outside [1, %d]: %w", cfg.Workers, maxWorkers, ErrConfig)
	}
	flight, err := flightEvents(cfg.FlightEvents)
	if err != nil {
		return nil, nil, fmt.Errorf("sched: new: %w", err)
	}
	s := &Scheduler{disp: cfg.Dispatcher, openIO: cfg.OpenIO, closeFn: cfg.CloseFD, pin: cfg.PinCPUs && pinSupported,
		latEvery: latencyEvery(cfg.LatencySample), onLong: cfg.OnLong}
	var cpus []int
	if s.pin {
		cpus = allowedCPUs()
	}
	for i := 0; i < cfg.Workers; i++ {
		w := &worker{s: s, id: i, park: newParker(), cpu: -1, latLeft: s.latEvery}
		if len(cpus) > 0 {
			w.cpu = cpus[i%len(cpus)]
		}
		s.workers = append(s.workers, w)
	}
	s.spinLooks = looksFor(cfg.Workers)
	s.registry.init(cfg.Workers)
	for i, w := range s.workers {
		w.home = &s.registry.homes[i]
		w.gone = make([]goneChain, len(s.registry.homes))
	}
	s.initStall()
	s.initTrace(flight)
	watchSpares(s)
	return s, &Control{s}, nil
}

// maxWorkers bounds Config.Workers.
const maxWorkers = 1024

// WorkersEnv names the environment variable that sets the worker count
// when Config.Workers is 0, as GOMAXPROCS sets Go's: a count in
// [1, maxWorkers]. It lets a deployment size a runtime without a flag, and
// the test suite run on 1..8 workers (`make workers`).
const WorkersEnv = "JADE_WORKERS"

// DefaultWorkers is the worker count used when Config.Workers is 0:
// $JADE_WORKERS when it is set to a valid count, else
// runtime.GOMAXPROCS(0) − 1, at least 1.
func DefaultWorkers() int {
	if n, err := envWorkers(); err == nil && n > 0 {
		return n
	}
	return max(1, runtime.GOMAXPROCS(0)-1)
}

// envWorkers returns $JADE_WORKERS, or 0 when it is unset; an error when it
// is set to anything but a count in [1, maxWorkers].
func envWorkers() (int, error) {
	v := os.Getenv(WorkersEnv)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxWorkers {
		return 0, fmt.Errorf("%s=%q: want a worker count in [1, %d]; unset it for the default (GOMAXPROCS−1)", WorkersEnv, v, maxWorkers)
	}
	return n, nil
}

// Note returns what Start changed in the Go runtime (a raised GOMAXPROCS),
// or "" when nothing; the CLI prints it under -v.
func (s *Scheduler) Note() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.note
}

// Pinned reports whether workers pin their threads to CPUs.
func (s *Scheduler) Pinned() bool { return s.pin }

// Steals returns how many times workers found work by stealing.
func (s *Scheduler) Steals() uint64 {
	var n uint64
	for _, w := range s.workers {
		n += w.steals.load()
	}
	return n
}

// Dispatches returns how many slices the workers have run.
func (s *Scheduler) Dispatches() uint64 {
	var n uint64
	for _, w := range s.workers {
		n += w.dispatches.load()
	}
	return n
}

// Parks returns how many times workers blocked.
func (s *Scheduler) Parks() uint64 {
	var n uint64
	for _, w := range s.workers {
		n += w.parks.load()
	}
	return n
}

// Workers returns the number of workers.
func (s *Scheduler) Workers() int { return len(s.workers) }

// LiveTasks returns the number of tasks spawned and not yet completed.
func (s *Scheduler) LiveTasks() int64 { return s.registry.count() }

// Engines returns the registered engines.
func (s *Scheduler) Engines() []*Engine {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Engine(nil), s.engines...)
}

// Start launches the workers.
func (c *Control) Start() error {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("sched: start: already started")
	}
	s.started = true
	// Keep one P beyond the workers so host goroutines, the GC and the
	// poller run while every worker is busy.
	if procs, want := runtime.GOMAXPROCS(0), len(s.workers)+1; procs < want {
		runtime.GOMAXPROCS(want)
		s.savedProcs, s.setProcs = procs, want
		s.note = fmt.Sprintf("sched: raised GOMAXPROCS from %d to %d for %d workers", procs, want, len(s.workers))
	}
	for _, w := range s.workers {
		s.wg.Add(1)
		go w.loop()
	}
	return nil
}

// finish completes t with outcome o: it publishes the outcome, wakes the
// joiners and releases the task's heap.
func (s *Scheduler) finish(w *worker, t *Task, o *Outcome) {
	pinned := s.leave(w, t)
	io := t.io()
	if io == nil && o.inline() {
		t.setOutcome(o, 0)
		s.completeInline(w, t, pinned)
		return
	}
	if io != nil {
		// Owned descriptors are closed before the outcome is
		// published: whoever sees the task completed finds its
		// handles closed.
		s.closeOwned(t, t.takeEnd())
	}
	charged := t.chargeOutcome(o) // the task's heap is gone already
	t.mu.Lock()
	t.ended = true
	t.setOutcome(o, charged)
	t.transition(Running, Completed)
	joiner1, joiners := t.takeWatchersLocked()
	t.mu.Unlock()
	s.completed(w, t, pinned, joiner1, joiners)
}

// finishScalar is finish for a Success whose value is the scalar k, bits
// (vmloop.Exec.ScalarResult), read before t's Exec is released.
func (s *Scheduler) finishScalar(w *worker, t *Task, k vmloop.Kind, bits uint64) {
	if t.io() != nil {
		s.finish(w, t, &Outcome{Kind: Success, Value: vmloop.ScalarValue(k, bits)})
		return
	}
	pinned := s.leave(w, t)
	// setOutcome's inline case: k, bits are in t's Exec's result word
	// already (ScalarResult; the release in leave keeps it).
	s.completeInline(w, t, pinned)
}

// leave ends t's run: its timers, its Exec (released: its result must
// have been read) and its worker, and reports whether t was pinned when
// its Exec was released (releaseExec). The release drops the references
// t's heap held (taskDrop), and what they were last to hold is recycled
// into the runner's cache: t's runner stays w (enter) until then. Lines
// as the kept profile (pgo/jade.pgo) knows them: releaseExec on the
// fifth, dropSpawn the sixth.
func (s *Scheduler) leave(w *worker, t *Task) (pinned bool) {
	if t.tm != nil {
		s.endTimers(w, t)
	}
	// t.link is still w: taskDrop's runner
	pinned = t.releaseExec()
	w.dropSpawn(t) // a spawn under way when t ended
	t.link = nil   // off its worker
	return pinned
}

// lookForLast ends a Drain's wait when no task is live (completed, while
// draining).
func (s *Scheduler) lookForLast() {
	s.mu.Lock()
	if s.zeroCh != nil && s.registry.count() == 0 {
		s.endDrainLocked()
	}
	s.mu.Unlock()
}

// endElsewhere is the end of completed for t, which ended away from the
// worker that spawned it: its home unlinks it and drops its live
// reference then (registry.go).
//
//go:noinline
func (s *Scheduler) endElsewhere(w *worker, t *Task, home *regHome, pinned bool) {
	if !pinned && t.has(flagPinned) {
		t.dropLateSlots()
	}
	s.registry.pushDead(w, home, t) // the last touch
}

// completeInline completes t, whose outcome is in its record already
// (setOutcome's inline case), without t.mu unless t is watched: the
// common case (no owned descriptors). It publishes, then looks whether
// anyone has watched t (AwaitTask and Done set watched under mu before
// they look at the state: one of the two sides sees the other).
func (s *Scheduler) completeInline(w *worker, t *Task, pinned bool) {
	t.transition(Running, Completed)
	var joiner1 Token
	var joiners []evEntry
	if t.has(flagWatched) {
		t.mu.Lock()
		t.ended = true
		joiner1, joiners = t.takeWatchersLocked()
		t.mu.Unlock()
	}
	s.completed(w, t, pinned, joiner1, joiners)
}

// completed is the end of finish once t is Completed: its joiners woken,
// its registration and live place given back, its record charged while
// handles still name it, and its liveness reference dropped (by t's home
// worker when t ended on another: registry.go).
//
// Not inlined: its callees (the registry's remove, the charge, the
// drop) are inlined into it instead, which a copy inside completeInline
// would not get (that function would pass the inliner's size bound;
// BenchmarkSpawnJoin).
//
//go:noinline
func (s *Scheduler) completed(w *worker, t *Task, pinned bool, joiner1 Token, joiners []evEntry) {
	if joiner1.Valid() {
		s.wake(w, joiner1)
	}
	wakeAll(s, w, joiners)
	home := s.registry.remove(w, t)
	t.engine.releaseLive(w)
	if s.draining.Load() {
		// Someone waits in Drain (rare): is this the last task? Drain sets
		// draining before it looks (and then a barrier), so that either it
		// sees this end or this sees draining.
		s.lookForLast()
	}
	if home != nil {
		s.endElsewhere(w, t, home, pinned)
		return
	}
	drop := t.chargeRecord()
	if !pinned && t.has(flagPinned) {
		// Pinned since releaseExec: either this or the pinner (taskRef),
		// which saw the task Completed, gives its Exec's spares back.
		t.dropLateSlots()
	}
	t.unrefOn(w, drop) // the last touch: without handles the record is reused
}
