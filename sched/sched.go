package sched

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jadevm/jade/evpoll"
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
	// ActTrap: SetTrap was called; the task traps.
	ActTrap
)

// Dispatcher receives every intrinsic request of every task. The RuntimeBus
// implements it, so requests from bytecode pass the same capability checks
// as the host's (S-16, S-20). It runs on the worker thread and must not
// block: waits go through Control's Await*/EventWait and ActSuspend.
type Dispatcher interface {
	// Intrinsic handles the pending request of t (t.Exec().Request()).
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

	// sampler is the CPU sampler while one is installed (profile.go);
	// sampleBusy is RequestSamples' scratch, guarded by idleMu.
	sampler    atomic.Pointer[samplerBox]
	sampleBusy []bool

	// latEvery is Config.LatencySample normalised (0: off); hostTicks
	// counts the enqueues from outside the workers for its sampling
	// (metrics_lat.go).
	latEvery  int32
	hostTicks atomic.Uint32

	// pause is the last stop of the world (metrics_stacks.go), nil when
	// none or once Shutdown stops the workers; pauseMu serialises pauses
	// and that stop, and guards halted (set when Shutdown stops the
	// workers).
	pauseMu sync.Mutex
	pause   atomic.Pointer[pauseState]
	halted  bool

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

	// The registry's first shard (written by a sixteenth of completions
	// and spawns) shares no line with hostLaunches.
	_        [cacheLinePad]byte
	registry registry // live tasks, for introspection and forced shutdown

	// spares moves recycled Execs between workers in batches (putExec,
	// takeExec): on its own line, away from the registry's shards.
	_      [cacheLinePad]byte
	spares execSpares
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
			return nil, nil, fmt.Errorf("sched: new: %w", err)
		}
		cfg.Workers = DefaultWorkers()
	}
	if cfg.Workers < 0 || cfg.Workers > maxWorkers {
		return nil, nil, fmt.Errorf("sched: new: %d workers outside [1, %d]", cfg.Workers, maxWorkers)
	}
	s := &Scheduler{disp: cfg.Dispatcher, openIO: cfg.OpenIO, closeFn: cfg.CloseFD, pin: cfg.PinCPUs && pinSupported,
		latEvery: latencyEvery(cfg.LatencySample)}
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
		n += w.steals.Load()
	}
	return n
}

// Dispatches returns how many slices the workers have run.
func (s *Scheduler) Dispatches() uint64 {
	var n uint64
	for _, w := range s.workers {
		n += w.dispatches.Load()
	}
	return n
}

// Parks returns how many times workers blocked.
func (s *Scheduler) Parks() uint64 {
	var n uint64
	for _, w := range s.workers {
		n += w.parks.Load()
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

// RegisterEngine adds an engine with the given configuration.
func (c *Control) RegisterEngine(name string, cfg EngineRuntimeConfig) (*Engine, error) {
	if cfg.EngineID != 0 {
		return nil, fmt.Errorf("sched: register engine %q: engineId %d given; RegisterEngine assigns ids: %w", name, cfg.EngineID, ErrConfig)
	}
	cfg, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	e := &Engine{id: c.s.nextEngine.Add(1), name: name, banks: make([]liveBank, len(c.s.workers)), mem: vmloop.NewBudget(cfg.Limits.MemoryBytes),
		hists: make([]engineHists, len(c.s.workers))}
	cfg.EngineID = e.id
	if cfg.TimerWheel != nil {
		e.wheel.Store(cfg.TimerWheel)
	}
	e.labels = pprof.WithLabels(context.Background(), pprof.Labels("jade_engine", name, "jade_engine_id", strconv.FormatUint(uint64(e.id), 10)))
	e.cfg.Store(&cfg)
	c.s.mu.Lock()
	c.s.engines = append(c.s.engines, e)
	c.s.mu.Unlock()
	return e, nil
}

// UpdateEngine replaces an engine's configuration; running tasks see the
// new reduction limit from their next dispatch, and new limits apply to
// later requests. A timer wheel can be added to an engine without one; an
// engine's wheel, once set, cannot be changed or removed (its shards live
// on every worker): give the same TimerWheel, or nil to keep it.
func (c *Control) UpdateEngine(e *Engine, cfg EngineRuntimeConfig) error {
	if cfg.EngineID != 0 && cfg.EngineID != e.id {
		return fmt.Errorf("sched: update engine %q: engineId %d is not the engine's id %d: %w", e.name, cfg.EngineID, e.id, ErrConfig)
	}
	cfg, err := cfg.normalize()
	if err != nil {
		return err
	}
	cfg.EngineID = e.id
	c.s.mu.Lock() // serialises wheel changes
	defer c.s.mu.Unlock()
	if old := e.wheel.Load(); old != nil {
		if cfg.TimerWheel != nil && *cfg.TimerWheel != *old {
			return fmt.Errorf("sched: update engine %q: its timer wheel %+v cannot be changed to %+v once set: %w", e.name, *old, *cfg.TimerWheel, ErrConfig)
		}
		cfg.TimerWheel = old
	} else if cfg.TimerWheel != nil {
		e.wheel.Store(cfg.TimerWheel)
	}
	e.cfg.Store(&cfg)
	e.mem.SetLimit(cfg.Limits.MemoryBytes)
	// Credits the workers banked under the old liveTasks limit go back,
	// and the banks stay closed until a spawn refills one under the new
	// limit: a lowered limit holds from the next spawn on.
	e.liveMu.Lock()
	e.closeBanksLocked()
	e.liveMu.Unlock()
	return nil
}

// execPool is the last level of Exec recycling, behind each worker's own
// pool and the scheduler's spares: Execs neither could keep, for spawns
// that find both empty and for host spawns. sync.Pool keeps per-P caches
// and empties itself across GCs.
var execPool sync.Pool

// execSpares is the second level of Exec recycling: recycled Execs moved
// between workers a batch at a time. A fan-out's children that run on
// another worker end there, so their Execs pile up in that worker's pool
// while the spawner's runs dry; one worker gives a batch of execBatch
// here under one lock, the other takes one the same way — one lock per
// execBatch tasks where sync.Pool cost a CAS on the other worker's pool
// chain (and its line) for each.
type execSpares struct {
	mu   sync.Mutex
	list []*vmloop.Exec // guarded by mu; at most maxSpareExecs
}

// execBatch is how many Execs move between a worker's pool and the spares
// at a time (half of a worker's pool); maxSpareExecs bounds the spares
// (what does not fit goes to execPool, which the GC empties).
// The spares never shrink (sync.Pool's GC-driven emptying is what they
// avoid), so they are kept small: vmloop.Exec.Recycle bounds what each
// Exec keeps (≈ 17 KiB at most, a few hundred bytes for most tasks).
const (
	execBatch     = execPoolSize / 2
	maxSpareExecs = 8 * execBatch
)

// give moves the newest execBatch Execs of *pool to the spares, or to
// execPool when the spares are full.
func (sp *execSpares) give(pool *[]*vmloop.Exec) {
	p := *pool
	batch := p[len(p)-execBatch:]
	sp.mu.Lock()
	if len(sp.list)+execBatch <= maxSpareExecs {
		sp.list = append(sp.list, batch...)
		batch = nil
	}
	sp.mu.Unlock()
	for _, ex := range batch {
		execPool.Put(ex)
	}
	clear(p[len(p)-execBatch:])
	*pool = p[:len(p)-execBatch]
}

// take moves up to execBatch Execs from the spares to *pool (empty) and
// reports whether it moved any.
func (sp *execSpares) take(pool *[]*vmloop.Exec) bool {
	sp.mu.Lock()
	n := min(execBatch, len(sp.list))
	if n > 0 {
		from := sp.list[len(sp.list)-n:]
		*pool = append(*pool, from...)
		clear(from)
		sp.list = sp.list[:len(sp.list)-n]
	}
	sp.mu.Unlock()
	return n > 0
}

// ErrLimit is wrapped by errors for exhausted engine limits; the bus turns
// them into a catchable ResourceError for the requester.
var ErrLimit = errors.New("resource limit reached")

// ErrStopped is returned for spawns after the scheduler began stopping.
var ErrStopped = errors.New("scheduler is stopping")

// Spawn creates a task running function fn of the verified program p in
// engine e with args and makes it Runnable. from is the spawning task, or
// nil for the host.
func (c *Control) Spawn(from *Task, e *Engine, p *vmloop.Program, fn int, args []vmloop.Value) (*Task, error) {
	t, err := c.Prepare(from, e, p, fn, args)
	if err != nil {
		return nil, err
	}
	t.flags.Or(flagPinned) // the caller holds it
	c.Launch(from, t)
	return t, nil
}

// Launch makes a task from Prepare Runnable; from is as for Prepare.
func (c *Control) Launch(from *Task, t *Task) {
	s := c.s
	s.registry.add(t)
	if s.stopping.Load() {
		// Prepared before Shutdown set stopping; its cancel-all may have
		// passed this shard already.
		t.flags.Or(flagCancel)
	}
	if !from.worker().stampSkip(t) {
		s.stampEnqueue(from.worker(), t, false)
	}
	s.enqueue(from.worker(), t)
	if from == nil {
		s.hostLaunches.Add(-1) // registered: Shutdown's drain sees it now
	}
}

// Prepare is Spawn without making the task Runnable: the caller can act
// on the task before anything else can see it (the bus gives it the
// descriptors among its arguments, so that they are closed before anyone
// sees it completed) and must then call Launch. A prepared task holds a
// place in its engine's liveTasks limit until it completes.
//
// A task prepared by the host (from == nil) is pinned: its record stays
// valid for as long as anything holds it. A task prepared by a task is
// not: its record is reused once it has completed and no heap object names
// it (Task.refs), so the caller must put the child's handle into a heap
// (the spawn's result) before Launch, and keep the pointer no longer than
// that handle lives (it is pinned when the handle is exported as a Value).
func (c *Control) Prepare(from *Task, e *Engine, p *vmloop.Program, fn int, args []vmloop.Value) (*Task, error) {
	return c.prepare(from, e, p, fn, args, nil)
}

// PrepareSpawn is Prepare for the spawn request that from (running on a
// worker) is stopped at: a task of from's engine running the requested
// function of from's program, with the request's arguments copied
// straight from from's registers (vmloop.Exec.ResetSpawn: no Values for
// scalar arguments). The rules of Prepare for a task prepared by a task
// apply.
func (c *Control) PrepareSpawn(from *Task) (*Task, error) {
	return c.prepare(from, from.engine, nil, 0, nil, from.exec)
}

// prepare is Prepare (src nil) and PrepareSpawn (src the spawner's Exec).
func (c *Control) prepare(from *Task, e *Engine, p *vmloop.Program, fn int, args []vmloop.Value, src *vmloop.Exec) (*Task, error) {
	s := c.s
	if from == nil {
		// Counted before the stopping check, given back by Launch (or
		// below on failure): Shutdown waits for the count to drop after
		// it sets stopping, so a host spawn that passed the check is
		// registered before Shutdown's cancel pass and drain, and never
		// launched onto stopped workers (a spawn from a task needs no
		// count: its spawner stays registered until it has launched).
		s.hostLaunches.Add(1)
	}
	t, err := c.makeTask(from, e, p, fn, args, src)
	if err != nil && from == nil {
		s.hostLaunches.Add(-1)
	}
	return t, err
}

func (c *Control) makeTask(from *Task, e *Engine, p *vmloop.Program, fn int, args []vmloop.Value, src *vmloop.Exec) (*Task, error) {
	s := c.s
	if s.stopping.Load() {
		return nil, fmt.Errorf("sched: spawn: %w", ErrStopped)
	}
	cfg := e.cfg.Load()
	w := from.worker()
	id := w.newID(s)
	ex := w.takeExec()
	var err error
	if src != nil {
		err = ex.ResetSpawn(src, cfg.Limits.task(e.mem), uint32(id))
		p = src.Program()
	} else {
		err = ex.Reset(p, fn, args, cfg.Limits.task(e.mem), uint32(id))
	}
	if err != nil {
		err = fmt.Errorf("sched: spawn: %w", err)
	} else {
		// The limit is looked at once the arguments are taken: a bad
		// argument (a stale handle traps the spawner) is reported first,
		// as it is on every other path.
		err = e.reserveLive(w)
	}
	if err != nil {
		ex.Recycle() // gives back the references its heap took
		w.putExec(ex)
		return nil, err
	}
	if cfg.GoLoop {
		ex.SetNative(false)
	}
	t, _ := taskPool.Get().(*Task)
	if t == nil {
		t = new(Task)
		tasksMade.Add(1)
	}
	t.id, t.engine, t.exec, t.prog = id, e, ex, p
	t.refs.Store(1) // live: dropped by finish
	if cfg.Metrics.TaskStats || from != nil && from.rare.Load() != nil {
		initTaskMetrics(t, from, cfg.Metrics.TaskStats) // before t is visible
	}
	if from == nil {
		t.flags.Or(flagPinned) // the host holds it
	}
	return t, nil
}

// Cancel requests cancellation of target (sticky, S-13). A waiting target
// is woken; a running one stops at its next safe point (its budget is
// zeroed); a runnable one completes Cancelled when dispatched.
func (c *Control) Cancel(from, target *Task) {
	if target.State() == Completed || target.flags.Or(flagCancel)&flagCancel != 0 {
		return
	}
	target.exec.Stop()
	if tok, ok := target.current(); ok {
		c.s.wakeAs(from.worker(), tok, phCancelled)
	}
}

// AwaitTask arms a wait of waiter (running on a worker) for target's
// completion. It returns true when target has already completed (nothing
// armed); otherwise the caller returns ActSuspend.
func (c *Control) AwaitTask(waiter, target *Task) bool {
	if target.State() == Completed {
		return true
	}
	tok := waiter.arm()
	target.mu.Lock()
	target.watch() // before the look: see finish
	if target.State() == Completed {
		target.mu.Unlock()
		waiter.disarm()
		return true
	}
	if !target.joiner1.Valid() || !target.joiner1.live() {
		target.joiner1 = tok // the slot is free, or its waiter gave up
	} else {
		r := target.rareLocked()
		r.joiners.push(tok)
	}
	target.mu.Unlock()
	return false
}

// EventWait arms a wait of waiter on ev. It returns true when a kept signal
// was consumed (nothing armed); otherwise the caller returns ActSuspend.
func (c *Control) EventWait(waiter *Task, ev *Event) bool {
	tok := waiter.arm()
	if ev.wait(tok) {
		waiter.disarm()
		return true
	}
	return false
}

// EventSignal wakes one waiter of ev or keeps the signal.
func (c *Control) EventSignal(from *Task, ev *Event) { ev.signal(c.s, from) }

// EventBroadcast wakes every waiter of ev.
func (c *Control) EventBroadcast(from *Task, ev *Event) { ev.broadcast(c.s, from) }

// Suspend arms a wait of t that something outside the scheduler (a host
// intrinsic, later an I/O completion) ends with Wake.
func (c *Control) Suspend(t *Task) Token { return t.armHost() }

// Wake ends the wait named by tok. A stale token is a no-op (false).
func (c *Control) Wake(tok Token) bool { return c.s.wake(nil, tok) }

// CompleteHost stores the result of a suspended host intrinsic and wakes
// its task; exactly one of value, thrown and trap is used (value if both
// others are nil). Only the first completion of a wait is taken: the result
// is stored under t.mu, which refuses a second one, and the wake's CAS
// publishes it to the worker that resumes the task. When the wake finds the
// wait stale (cancelled, already woken) the result is withdrawn and false
// is returned.
func (c *Control) CompleteHost(tok Token, value vmloop.Value, thrown *vmloop.Value, trap *vmloop.TrapInfo) bool {
	return c.s.completeHost(nil, tok, value, thrown, trap, nil)
}

// CompleteHostRelease is CompleteHost of a value that holds something the
// host must take back if the task never receives it: when the task is
// cancelled after this completion won its wake and before it resumed,
// release runs with value (from the worker that ends the task, through
// DropHostResult). It does not run when false is returned.
func (c *Control) CompleteHostRelease(tok Token, value vmloop.Value, release func(vmloop.Value)) bool {
	return c.s.completeHost(nil, tok, value, nil, nil, release)
}

// completeHost is CompleteHost run by worker w (nil outside the workers).
func (s *Scheduler) completeHost(w *worker, tok Token, value vmloop.Value, thrown *vmloop.Value, trap *vmloop.TrapInfo, release func(vmloop.Value)) bool {
	t := tok.t
	t.mu.Lock()
	if _, live := t.current(); !live || t.hasHostResultLocked() || t.wait.Load()>>phaseBits != tok.gen {
		// a stale token must not occupy the slot of a later wait
		t.mu.Unlock()
		return false
	}
	r := t.rareLocked()
	if thrown == nil && trap == nil && release == nil && value.Kind() == vmloop.KindI64 {
		r.hostInline, r.hostBits, r.hostResult = true, value.Int(), nil
	} else {
		r.hostInline, r.hostResult = false, &hostResult{value: value, err: thrown, trap: trap, release: release}
	}
	r.hostGen = tok.gen
	t.mu.Unlock()
	if s.wake(w, tok) {
		return true
	}
	// The wait ended otherwise (a timeout, a cancel): withdraw the result
	// if it is still there. If the task took it meanwhile, it has it: say
	// so (the caller must not close a descriptor it carries). A later
	// wait's result has another generation and stays.
	t.mu.Lock()
	defer t.mu.Unlock()
	if r.hostGen != tok.gen {
		return false
	}
	if r.hostInline || r.hostResult != nil {
		r.hostInline, r.hostResult = false, nil
		return false
	}
	return true
}

// TakeHostResult returns and clears the result stored by CompleteHost; the
// dispatcher calls it from Resume on the worker running t.
func (c *Control) TakeHostResult(t *Task) (value vmloop.Value, thrown *vmloop.Value, trap *vmloop.TrapInfo, ok bool) {
	t.mu.Lock()
	if !t.hasHostResultLocked() {
		t.mu.Unlock()
		return vmloop.Value{}, nil, nil, false
	}
	r := t.rare.Load()
	if r.hostInline {
		v := r.hostBits
		r.hostInline = false
		t.mu.Unlock()
		return vmloop.I64(v), nil, nil, true
	}
	h := r.hostResult
	r.hostResult = nil
	t.mu.Unlock()
	return h.value, h.err, h.trap, true
}

// DropHostResult takes the result stored by CompleteHost for a task that
// will not receive it (cancelled after the completion won) and runs its
// release hook, if it has one (CompleteHostRelease).
func (c *Control) DropHostResult(t *Task) {
	t.mu.Lock()
	if !t.hasHostResultLocked() {
		t.mu.Unlock()
		return
	}
	r := t.rare.Load()
	h := r.hostResult
	r.hostInline, r.hostResult = false, nil
	t.mu.Unlock()
	if h != nil && h.release != nil {
		h.release(h.value)
	}
}

// wake performs a wake and enqueues the task when it was parked; w is the
// worker doing it, or nil outside the workers.
func (s *Scheduler) wake(w *worker, tok Token) bool { return s.wakeAs(w, tok, phWoken) }

// wakeAs is wake writing the woken phase ph (wait.go).
func (s *Scheduler) wakeAs(w *worker, tok Token, ph uint64) bool {
	woke, enq := tok.wakeAs(ph)
	if enq {
		s.waiting.Add(-1)
		if !w.stampSkip(tok.t) {
			s.stampEnqueue(w, tok.t, true)
		}
		s.enqueue(w, tok.t)
	}
	return woke
}

// WaitingTasks returns the number of tasks parked in Waiting.
func (s *Scheduler) WaitingTasks() int64 { return s.waiting.Load() }

// enqueue makes a Runnable task visible to workers: in the lifo slot of
// worker w when the task running there made it runnable, on w's local
// queue when w made it runnable between tasks (timers, completions) —
// except a completion reaped while the inject queue holds tasks, which
// goes behind them — else on the inject queue (waking a parked worker).
func (s *Scheduler) enqueue(w *worker, t *Task) {
	if w != nil && w.inTask {
		// Spawned or woken by the running task: it runs next here (the
		// lifo slot); the task it displaces goes behind the others and
		// may be stolen.
		if t = w.lifo.Swap(t); t == nil {
			return
		}
	}
	if w != nil {
		if w.reaping && s.inject.len() > 0 {
			// Runnable tasks wait in the inject queue (an overflow of a
			// local queue, outside wakes): a completion goes behind them,
			// not ahead on the local queue, or under a load that keeps
			// completions coming they would wait for every later one
			// (echo_proc_1000's tail).
			s.inject.push(t)
			return
		}
		w.local.push(t, &s.inject)
		if len(s.workers) > 1 && !w.reaping {
			s.notify() // a reap notifies once, after it (shareBacklog)
		}
		return
	}
	s.inject.push(t)
	if !s.notify() {
		s.kickOne()
	}
}

// notify unparks one parked worker, if any and if no worker searches (a
// searcher will find the work, or the last one re-checks every queue before
// it parks). The woken worker starts searching: the notifier counts it in
// nSearching, so a burst of pushes wakes one worker, not all of them.
//
// It reports whether some worker will look for the work: one searches or
// was woken. False means every worker is running (or about to run) a task.
func (s *Scheduler) notify() bool {
	if s.nSearching.Load() != 0 {
		return true
	}
	if s.nIdle.Load() == 0 {
		return false
	}
	s.idleMu.Lock()
	n := len(s.idle)
	if n == 0 || s.nSearching.Load() != 0 {
		s.idleMu.Unlock()
		return n != 0
	}
	// The most recently idled worker, unless it is handing itself to Go's
	// scheduler on its way into the park (yieldGo): that one would take
	// the wake only once Go runs it again, while this counts it as
	// searching and so stops anyone else being woken.
	i := n - 1
	for j := n - 1; j >= 0; j-- {
		if !s.idle[j].inGo.Load() {
			i = j
			break
		}
	}
	w := s.idle[i]
	s.idle = append(s.idle[:i], s.idle[i+1:]...)
	s.nIdle.Add(-1)
	w.parked = false
	w.notified = true
	s.nSearching.Add(1)
	s.idleMu.Unlock()
	w.unpark()
	return true
}

// kickOne makes an outside wake that found every worker busy wait for a
// safe point rather than a slice boundary (S-6, spec §1.2): it stops the
// slice running on one worker (rotating), whose next pick then looks at
// the inject queue first. Without it the woken task waited for the first
// of the workers' slices to end — up to a whole slice (~25 µs at the
// default limit) plus the thread's scheduling. The stopped task loses the
// rest of its slice and goes behind the others, as if preempted; at most
// one kick is outstanding until a worker takes from the inject queue.
func (s *Scheduler) kickOne() {
	for {
		if s.kick.Load() || !s.kick.CompareAndSwap(false, true) {
			return
		}
		if s.inject.len() > 0 {
			break
		}
		// A worker took the task between the push and the kick (and found
		// no kick to answer): a kick now would stay outstanding with
		// nothing queued and deny the next outside wake its own. Withdraw
		// it; if something was queued meanwhile, its waker may have seen
		// the kick set and returned, so kick for it.
		s.kick.Store(false)
		if s.inject.len() == 0 {
			return
		}
	}
	n := uint32(len(s.workers))
	start := s.kickNext.Add(1)
	for i := uint32(0); i < n; i++ {
		w := s.workers[(start+i)%n]
		if w.inGo.Load() {
			continue // handed to Go's scheduler for a moment (yieldGo)
		}
		if ex := w.cur.Load(); ex != nil {
			ex.Stop()
			s.kicks.Add(1)
			return
		}
	}
	// No worker has run a task yet: their next pick sees s.kick.
}

// localWork reports whether some worker's local queue holds a task.
func (s *Scheduler) localWork() bool {
	for _, w := range s.workers {
		if w.local.len() > 0 {
			return true
		}
	}
	return false
}

// Drain waits until every task has completed (graceful shutdown), or ctx
// ends. New spawns are still accepted while draining.
func (c *Control) Drain(ctx context.Context) error {
	s := c.s
	s.mu.Lock()
	s.draining.Store(true) // before the look: see finish
	if s.registry.count() == 0 {
		s.endDrainLocked() // other waiters too (finish ends it first)
		s.mu.Unlock()
		return nil
	}
	if s.zeroCh == nil {
		s.zeroCh = make(chan struct{})
	}
	ch := s.zeroCh
	s.drainers++
	s.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		if s.zeroCh == ch {
			if s.drainers--; s.drainers == 0 {
				s.endDrainLocked() // the last waiter left: finishes stop looking
			}
		}
		s.mu.Unlock()
		return fmt.Errorf("sched: drain: %d tasks still live: %w", s.LiveTasks(), ctx.Err())
	}
}

// endDrainLocked ends the current drain wait (s.mu held): its waiters, if
// any, return, and completions stop looking for the last task.
func (s *Scheduler) endDrainLocked() {
	if s.zeroCh != nil {
		close(s.zeroCh)
		s.zeroCh = nil
	}
	s.drainers = 0
	s.draining.Store(false)
}

// TaskReport describes a live task (introspection, forced shutdown).
type TaskReport struct {
	ID     uint64
	Engine string
	State  State
	Func   string
	PC     int
	// Name is the task's name, "" when it has none (Task.Name).
	Name string `json:",omitempty"`
	// Stats are its statistics, nil unless its engine kept them
	// (MetricsConfig.TaskStats) when it was spawned.
	Stats *TaskStats `json:",omitempty"`
	// Stack is its Jade stack, innermost first (TasksWithStacks only).
	Stack []Frame `json:",omitempty"`
}

func (r TaskReport) String() string {
	if r.Name != "" {
		return fmt.Sprintf("task %d %q (engine %s) %s at %s@%d", r.ID, r.Name, r.Engine, r.State, r.Func, r.PC)
	}
	return fmt.Sprintf("task %d (engine %s) %s at %s@%d", r.ID, r.Engine, r.State, r.Func, r.PC)
}

// Tasks lists the live tasks, by id. A running task reports the location
// it published at its last safe point.
func (s *Scheduler) Tasks() []TaskReport {
	var out []TaskReport
	s.registry.each(func(t *Task) {
		fn, pc := t.Where()
		out = append(out, TaskReport{ID: t.id, Engine: t.engine.name, State: t.State(), Func: fn, PC: pc,
			Name: t.Name(), Stats: t.Stats()})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Shutdown stops the scheduler. It refuses new spawns, cancels every live
// task and waits until they complete or ctx ends; then it stops the
// workers. Tasks still live at the deadline (a host intrinsic that never
// returns, say) are reported and abandoned untouched: the spec forbids
// interrupting VM or FFI code; completed tasks are never among them
// (SummarizeReports describes a long list in bounded space). Callers wanting a graceful stop call Drain
// first. A host spawn that passed its stopping check before Shutdown began
// is waited for and cancelled like the rest; if ctx has already ended,
// such a spawn may be left registered and never run (it is among the
// tasks Drain and LiveTasks still count).
func (c *Control) Shutdown(ctx context.Context) []TaskReport {
	s := c.s
	s.stopping.Store(true)
	// Host spawns that passed the stopping check register before the
	// cancel pass (see prepare); the window is a few microseconds.
	for s.hostLaunches.Load() != 0 && ctx.Err() == nil {
		time.Sleep(10 * time.Microsecond)
	}
	s.registry.each(func(t *Task) { c.Cancel(nil, t) })
	var stuck []TaskReport
	if err := c.Drain(ctx); err != nil {
		// A task still registered may have completed by now: it is not
		// stuck, so it is not reported.
		stuck = slices.DeleteFunc(s.Tasks(), func(r TaskReport) bool { return r.State == Completed })
	}
	// Stop the workers; a worker stuck inside a task is abandoned.
	s.mu.Lock()
	started := s.started
	s.mu.Unlock()
	if !started {
		return stuck
	}
	s.pauseMu.Lock() // no stop of the world from now on: w.stop means stop
	s.halted = true
	s.pause.Store(nil)
	for _, w := range s.workers {
		w.stop.Store(true)
		w.unpark()
	}
	s.pauseMu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	// Give back the GOMAXPROCS raise unless someone changed it since.
	s.mu.Lock()
	if s.setProcs != 0 && runtime.GOMAXPROCS(0) == s.setProcs {
		runtime.GOMAXPROCS(s.savedProcs)
	}
	s.setProcs = 0
	s.mu.Unlock()
	return stuck
}

// finish completes t with outcome o: it publishes the outcome, wakes the
// joiners and releases the task's heap.
func (s *Scheduler) finish(w *worker, t *Task, o Outcome) {
	if t.tm != nil {
		s.endTimers(w, t)
	}
	t.w = nil
	t.exec.Recycle()
	w.putExec(t.exec)
	var hooks []func()
	var joiner1 Token
	var joiners []Token
	if t.io() == nil && o.inline() {
		// The common case, without t.mu: no end hooks, an outcome that
		// lives in the record. Publish, then look whether anyone has
		// watched t (AwaitTask, Done, OnEnd set watched under mu before
		// they look at the state: one of the two sides sees the other).
		t.setOutcome(&o, 0)
		t.transition(Running, Completed)
		if t.has(flagWatched) {
			t.mu.Lock()
			hooks = t.takeEndHooksLocked() // of an OnEnd that raced the end
			joiner1, joiners = t.takeWatchersLocked()
			t.mu.Unlock()
		}
	} else {
		if t.io() != nil {
			// End hooks (closing owned descriptors) run before the outcome
			// is published: whoever sees the task completed finds its
			// handles closed. OnEnd after this runs its hook at once.
			hooks, owned := t.takeEnd()
			for _, f := range hooks {
				f()
			}
			s.closeOwned(t, owned)
		}
		charged := t.chargeOutcome(&o) // the task's heap is gone already
		t.mu.Lock()
		if !t.ended {
			// Marks t ended for OnEnd. A hook registered since the check
			// above (an OnEnd racing t's end; the bus registers before
			// Launch or from t itself, so none does today) runs just
			// after publication.
			hooks = t.takeEndHooksLocked()
		}
		t.setOutcome(&o, charged)
		t.transition(Running, Completed)
		joiner1, joiners = t.takeWatchersLocked()
		t.mu.Unlock()
	}
	for _, f := range hooks {
		f()
	}
	if joiner1.Valid() {
		s.wake(w, joiner1)
	}
	for _, tok := range joiners {
		s.wake(w, tok)
	}
	s.registry.remove(t)
	t.engine.releaseLive(w)
	if s.draining.Load() {
		// Someone waits in Drain (rare): is this the last task? Drain sets
		// draining before it looks, so that either it sees this removal or
		// this sees draining.
		s.mu.Lock()
		if s.zeroCh != nil && s.registry.count() == 0 {
			s.endDrainLocked()
		}
		s.mu.Unlock()
	}
	t.unref() // the last touch: without handles the record is reused
}

// registry tracks live tasks in sharded intrusive lists (Task.rprev,
// Task.rnext) so that spawn and completion touch one small lock and cost no
// allocation. Each shard also counts its tasks: the scheduler's live count
// is their sum (no counter of its own for every spawn and completion to
// update from every worker).
type registry struct {
	shards [registryShards]struct {
		mu   sync.Mutex
		head *Task // guarded by mu
		n    int64 // tasks in the list; guarded by mu
		_    [cacheLinePad - 24]byte
	}
}

const registryShards = 16

func (r *registry) add(t *Task) {
	sh := &r.shards[t.id%registryShards]
	sh.mu.Lock()
	t.rnext = sh.head
	if sh.head != nil {
		sh.head.rprev = t
	}
	sh.head = t
	sh.n++
	sh.mu.Unlock()
}

func (r *registry) remove(t *Task) {
	sh := &r.shards[t.id%registryShards]
	sh.mu.Lock()
	if t.rprev != nil {
		t.rprev.rnext = t.rnext
	} else {
		sh.head = t.rnext
	}
	if t.rnext != nil {
		t.rnext.rprev = t.rprev
	}
	t.rprev, t.rnext = nil, nil
	sh.n--
	sh.mu.Unlock()
}

// count returns the number of registered tasks, with every shard locked
// at once: exact. (Shard by shard it could miss a child registered in a
// shard already read while its spawner left one not read yet, and read 0
// with a task live.) A task is registered (Launch) before the task that
// spawned it can complete, so while any task is live one is registered.
func (r *registry) count() int64 {
	for i := range r.shards {
		r.shards[i].mu.Lock()
	}
	var n int64
	for i := range r.shards {
		n += r.shards[i].n
	}
	for i := range r.shards {
		r.shards[i].mu.Unlock()
	}
	return n
}

func (r *registry) each(f func(*Task)) {
	var ts []*Task
	for i := range r.shards {
		sh := &r.shards[i]
		sh.mu.Lock()
		for t := sh.head; t != nil; t = t.rnext {
			t.refs.Add(1) // live here, so not yet reusable: keep it so
			ts = append(ts, t)
		}
		sh.mu.Unlock()
	}
	for _, t := range ts {
		f(t)
		t.unref()
	}
}

// IdleWorkers returns how many workers are parked (a snapshot).
func (s *Scheduler) IdleWorkers() int { return int(s.nIdle.Load()) }
