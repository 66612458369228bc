package sched

import (
	"context"
	"errors"
	"fmt"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/jadevm/jade/timerwheel"
	"github.com/jadevm/jade/vmloop"
)

// DefaultReductionLimit is the reductions one dispatch may spend before the
// task is preempted: a full slice of plain bytecode lasts some tens of
// microseconds (BenchmarkSliceTimeIntrinsics and fairness's "p99 slice
// time" row measure it).
const DefaultReductionLimit = 25_000

// MaxReductionLimit is the runtime-wide cap on ReductionLimit: larger
// budgets would let one task hold a worker for tens of milliseconds.
const MaxReductionLimit = 10_000_000

// DefaultMaxLiveTasks bounds the live tasks of one engine.
const DefaultMaxLiveTasks = 1 << 22

// DefaultMaxPendingTimers bounds the pending timers (sleeps, wait timeouts,
// periodic ticks) of one engine.
const DefaultMaxPendingTimers = 1 << 22

// DefaultMaxInFlightIO bounds the socket and file operations one engine has
// in flight.
const DefaultMaxInFlightIO = 1 << 16

// DefaultMaxBlockingCalls bounds the blocking host calls (the bus's
// blocking intrinsics) one engine has queued or running.
const DefaultMaxBlockingCalls = 1 << 16

// DefaultMaxMemoryBytes bounds the host memory the tasks of one engine
// hold (ResourceLimits.MemoryBytes).
const DefaultMaxMemoryBytes = 1 << 30

// taskBytes is the fixed share of an engine's memory budget that each of
// its live tasks holds: its task record with its Exec, the first
// vmloop.StackGrant bytes of its register and frame stacks and the first
// vmloop.HeapGrant bytes of its heap objects (what it holds beyond them,
// larger stacks and heaps and its outcome, is counted as it grows).
const taskBytes = int64(unsafe.Sizeof(Task{})) + vmloop.StackGrant + vmloop.HeapGrant

// EngineRuntimeConfig is everything the scheduler knows about an engine
// (spec §4.2, S-14): it never learns what the engine means. Zero fields take
// the documented defaults.
type EngineRuntimeConfig struct {
	// EngineID is the engine's id. RegisterEngine assigns it (a non-zero
	// value given there is refused); Engine.Config reports it.
	EngineID uint32
	// ReductionLimit is the budget of one dispatch (0: default).
	ReductionLimit int64
	// LongSlice: a slice of the engine's tasks that runs longer is
	// counted (EngineMetrics.LongSlices), recorded in the trace and
	// reported (Config.OnLong, once per second); beside ReductionLimit,
	// since every dispatch reads both. 0 is off: the check
	// reads the clock at each dispatch and slice end of the engine's
	// tasks. Measured when the slice ends: no timer.
	LongSlice time.Duration
	// LongCall is LongSlice for one non-blocking host intrinsic call
	// (EngineMetrics.LongCalls); 0 is off. Host calls are timed anyway,
	// so the check costs nothing more.
	LongCall time.Duration
	// LongWait is LongSlice for a task's wait in a run queue (Runnable
	// to Running), looked at for the enqueues the latency histograms
	// sample (Config.LatencySample: one in 256 by default) and every
	// enqueue of a task with statistics (EngineMetrics.LongWaits); 0 is
	// off. A latency outlier so dumps the flight recorder as a long
	// slice does.
	LongWait time.Duration
	// TimerWheel is the geometry of the engine's timer wheel, or nil for an
	// engine without one (an event-driven engine): its tasks get a
	// catchable error naming the engine when they ask for any timer (sleep,
	// timeout, periodic tick). The wheel is sharded per (engine, worker);
	// see timerwheel.DefaultConfig for the usual geometry. A wheel can be
	// added to a running engine; once set it cannot be changed or removed.
	TimerWheel *timerwheel.TimerWheelConfig
	// Limits are the engine's resource limits (the one table of
	// ARCHITECTURE.md, "Limits").
	Limits ResourceLimits
	// OverrunPolicy is the engine's policy for periodic jobs that ask for
	// timerwheel.PolicyInherit (the zero value means Drift).
	OverrunPolicy timerwheel.OverrunPolicy
	// Metrics says which optional metrics are collected.
	Metrics MetricsConfig
	// GoLoop runs the engine's tasks on the pure-Go VM loop even when the
	// cgo loop of package native is available and enabled (the global
	// switches are native.Disable and JADE_NATIVE=0).
	GoLoop bool
}

// ResourceLimits bound what an engine and its tasks may hold. Exhausting a
// per-engine count (tasks, timers, in-flight I/O) throws a catchable
// ResourceError to the requesting task and disturbs nothing else;
// exhausting a per-task bound (stack depth, heap bytes) traps that task.
// Zero fields take the defaults.
type ResourceLimits struct {
	LiveTasks     int64 // tasks spawned and not completed (DefaultMaxLiveTasks)
	PendingTimers int64 // armed timers (DefaultMaxPendingTimers)
	InFlightIO    int64 // socket/file operations in flight (DefaultMaxInFlightIO)
	StackDepth    int   // call frames per task (vmloop.DefaultLimits.MaxFrames)
	HeapBytes     int64 // heap bytes per task (vmloop.DefaultLimits.MaxHeapBytes)
	// MemoryBytes bounds the host memory of all the engine's tasks
	// together (DefaultMaxMemoryBytes): a fixed share per live task, their
	// heaps, register and frame stacks, values being copied out of a heap
	// and the outcomes kept for joiners (vmloop.Budget). A spawn that does
	// not fit is refused with a ResourceError; an allocation, call or copy
	// that does not fit traps its task; an outcome that does not fit
	// becomes a trap of its task.
	MemoryBytes int64
	// BlockingCalls bounds the engine's blocking host calls queued for or
	// running on the bus's blocking pool (DefaultMaxBlockingCalls); one
	// more throws a catchable ResourceError to the calling task.
	BlockingCalls int64
}

// task returns the per-task part as the VM's limits, with the engine's
// memory budget.
func (l ResourceLimits) task(mem *vmloop.Budget) vmloop.Limits {
	return vmloop.Limits{MaxFrames: l.StackDepth, MaxHeapBytes: l.HeapBytes, Memory: mem}
}

// MetricsLevel says how much of a metric family is collected.
type MetricsLevel uint8

// Metrics levels.
const (
	// MetricsPerJob (the default) reports engine totals and every job.
	MetricsPerJob MetricsLevel = iota
	// MetricsEngine reports only the engine's totals.
	MetricsEngine
	// MetricsOff reports nothing for the family.
	MetricsOff
)

// MetricsConfig selects the optional metrics of an engine (spec §4.5). The
// scheduler-wide quantities (runnable, waiting, workers, queue pressure) are
// always collected; they cost one atomic each.
type MetricsConfig struct {
	// Periodic selects the periodic-job metrics (targetRate, actualRate,
	// handlerDuration, overrunCount; see Metrics.Engines[i].Periodic).
	Periodic MetricsLevel
	// TaskStats keeps per-task statistics for the engine's tasks spawned
	// while it is set: slices, reductions and time Runnable (TaskReport).
	// Off by default: each such task carries its rare part (an allocation
	// at spawn) and every enqueue of it is timestamped.
	TaskStats bool
}

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("invalid engine configuration")

// normalize fills defaults and validates.
func (c EngineRuntimeConfig) normalize() (EngineRuntimeConfig, error) {
	if c.ReductionLimit == 0 {
		c.ReductionLimit = DefaultReductionLimit
	}
	if c.ReductionLimit < 0 || c.ReductionLimit > MaxReductionLimit {
		return c, fmt.Errorf("sched: engine config: reductionLimit %d outside [1, %d]: %w", c.ReductionLimit, MaxReductionLimit, ErrConfig)
	}
	l := &c.Limits
	for _, f := range []struct {
		name string
		v    *int64
		def  int64
	}{{"liveTasks", &l.LiveTasks, DefaultMaxLiveTasks}, {"pendingTimers", &l.PendingTimers, DefaultMaxPendingTimers}, {"inFlightIO", &l.InFlightIO, DefaultMaxInFlightIO}, {"heapBytes", &l.HeapBytes, vmloop.DefaultLimits.MaxHeapBytes}, {"memoryBytes", &l.MemoryBytes, DefaultMaxMemoryBytes}, {"blockingCalls", &l.BlockingCalls, DefaultMaxBlockingCalls}} {
		if *f.v == 0 {
			*f.v = f.def
		}
		if *f.v < 0 {
			return c, fmt.Errorf("sched: engine config: limit %s %d is negative: %w", f.name, *f.v, ErrConfig)
		}
	}
	if l.StackDepth == 0 {
		l.StackDepth = vmloop.DefaultLimits.MaxFrames
	}
	if l.StackDepth < 1 {
		return c, fmt.Errorf("sched: engine config: limit stackDepth %d must be positive: %w", l.StackDepth, ErrConfig)
	}
	if c.TimerWheel != nil {
		if err := c.TimerWheel.Validate(); err != nil {
			return c, fmt.Errorf("sched: engine config: %w: %w", err, ErrConfig)
		}
		w := *c.TimerWheel
		c.TimerWheel = &w // the engine keeps its own copy
	}
	if c.OverrunPolicy > timerwheel.Queue {
		return c, fmt.Errorf("sched: engine config: unknown overrunPolicy %d: %w", c.OverrunPolicy, ErrConfig)
	}
	if c.LongSlice < 0 || c.LongCall < 0 || c.LongWait < 0 {
		return c, fmt.Errorf("sched: engine config: longSlice %v, longCall %v and longWait %v must not be negative: %w", c.LongSlice, c.LongCall, c.LongWait, ErrConfig)
	}
	if c.Metrics.Periodic > MetricsOff {
		return c, fmt.Errorf("sched: engine config: unknown metrics level %d: %w", c.Metrics.Periodic, ErrConfig)
	}
	return c, nil
}

// Engine is the scheduler's view of one engine: its id, its current
// runtime configuration and its counters.
//
// Layout: what every dispatch reads (cfg, wheel, labels) shares no cache
// line with the counters that spawns, completions, timers and I/O update
// from every worker; each counter has a line of its own. (With cfg beside
// live, each spawn on one worker took the line from every other worker's
// next dispatch.)
type Engine struct {
	id   uint32
	name string
	s    *Scheduler                          // the scheduler it was registered with; set once, at registration
	cfg  atomic.Pointer[EngineRuntimeConfig] // replaced whole by UpdateEngine
	// wheel is the engine's wheel geometry once one is set (never changed
	// afterwards: shards built from it live on every worker).
	wheel atomic.Pointer[timerwheel.TimerWheelConfig]
	// labels is the pprof label context of the engine's tasks, built once
	// at registration (worker goroutines switch to it per dispatch).
	labels context.Context
	// spawnInLoop: the engine's tasks may spawn (the bus's grant), so
	// the VM loop answers their spawns itself (invm.go); set once by
	// SpawnInLoop before any task of the engine runs.
	spawnInLoop bool

	jobsMu sync.Mutex
	jobs   []*Job // periodic jobs of the engine's live tasks; guarded by jobsMu

	// banks are the live-task credits each worker holds (liveBank), one
	// line each; made at registration, one per worker.
	banks []liveBank
	// mem is the engine's memory budget (ResourceLimits.MemoryBytes),
	// shared by its tasks' heaps; made at registration, its limit set by
	// UpdateEngine. Every live-task place (live, below) holds taskBytes of
	// it, moved with the place.
	mem *vmloop.Budget
	// hists are the engine's latency histograms, one set per worker
	// (index: worker id), each written only by its worker; made at
	// registration (metrics_lat.go).
	hists []engineHists

	_ [cacheLinePad]byte
	// liveMu orders every change of live with the banks it moves credits
	// to and from: refills, batch returns, reclaims, closing the banks and
	// places taken or given one at a time all happen under it, so no
	// credit is ever between live and a bank where another holder of
	// liveMu could miss it (livebank.go).
	liveMu sync.Mutex
	// live counts the engine's live tasks plus the credits in its banks;
	// guarded by liveMu. A place is taken (a task's, or a refill's batch)
	// only while live stays within the liveTasks limit. Written once per
	// liveBatch tasks of a worker while its bank is open, not twice per
	// task from every worker.
	live int64
	// banksClosed: every bank is closed (liveBank); guarded by liveMu.
	banksClosed bool
	_           [cacheLinePad - 24]byte
	// timers counts the engine's armed timers over all shards; ioOps its
	// socket and file operations in flight.
	timers atomic.Int64
	_      [cacheLinePad - 8]byte
	ioOps  atomic.Int64
	_      [cacheLinePad - 8]byte
	// blocking counts the engine's blocking host calls queued or running
	// (ReserveBlocking).
	blocking atomic.Int64
	_        [cacheLinePad - 8]byte
	// longSlices and longCalls count the slices and host calls that ran
	// longer than the engine's thresholds (trace_hooks.go), and
	// longWaits those of its sampled run-queue waits.
	longSlices, longCalls, longWaits atomic.Uint64
	_                                [cacheLinePad - 24]byte
}

// ID returns the engine id.
func (e *Engine) ID() uint32 { return e.id }

// Name returns the engine's name.
func (e *Engine) Name() string { return e.name }

// Config returns the current runtime configuration (a copy).
func (e *Engine) Config() EngineRuntimeConfig { return *e.cfg.Load() }

// PendingTimers returns the engine's armed timers.
func (e *Engine) PendingTimers() int64 { return e.timers.Load() }

// InFlightIO returns the engine's socket and file operations in flight.
func (e *Engine) InFlightIO() int64 { return e.ioOps.Load() }

// MemoryBytes returns the bytes of the engine's memory budget its tasks
// hold now (ResourceLimits.MemoryBytes). Like LiveTasks it first takes the
// workers' unused live-task credits back, with the task shares they
// reserved, so that an idle engine reports what its tasks hold, not what
// its workers banked for their next spawns.
func (e *Engine) MemoryBytes() int64 {
	e.liveMu.Lock()
	e.reclaimLocked()
	e.liveMu.Unlock()
	return e.mem.Used()
}

// Budget returns engine e's memory budget (ResourceLimits.MemoryBytes),
// for what the layers above charge on the engine's behalf (messages a
// host sends into a channel).
func (c *Control) Budget(e *Engine) *vmloop.Budget { return e.mem }

// ReserveBlocking takes a place for one blocking host call under engine
// e's blockingCalls limit; the error wraps ErrLimit. ReleaseBlocking
// gives it back when the call has ended.
func (c *Control) ReserveBlocking(e *Engine) error {
	return e.reserve(&e.blocking, e.cfg.Load().Limits.BlockingCalls, "blocking host call", "blocking host calls queued or running", "blockingCalls limit")
}

// ReleaseBlocking gives back a place of engine e taken by ReserveBlocking.
func (c *Control) ReleaseBlocking(e *Engine) { e.blocking.Add(-1) }

// BlockingCalls returns the engine's blocking host calls queued or running.
func (e *Engine) BlockingCalls() int64 { return e.blocking.Load() }

// HasWheel reports whether the engine has a timer wheel.
func (e *Engine) HasWheel() bool { return e.wheel.Load() != nil }

// reserve takes one unit of an engine count (live tasks, pending timers,
// I/O in flight) unless that would pass lim; the error names the engine,
// what is counted and the limit, and wraps ErrLimit.
func (e *Engine) reserve(c *atomic.Int64, lim int64, op, what, limit string) error {
	if n := c.Add(1); n > lim {
		c.Add(-1)
		return fmt.Errorf("sched: %s: engine %q has %d %s (%s %d): %w", op, e.name, n-1, what, limit, lim, ErrLimit)
	}
	return nil
}

// noWheel is the error of a timer request on an engine without a wheel.
func (e *Engine) noWheel(op string) error {
	return fmt.Errorf("sched: %s: engine %q (id %d) has no timer wheel; give it a timerWheelConfig: %w", op, e.name, e.id, ErrNoWheel)
}

// SpawnInLoop lets the VM loop answer the spawns of e's tasks itself,
// without the dispatcher (sched/doc.go, "Requests answered in the VM
// loop"): for a dispatcher that grants every spawn request of e's tasks.
// Call it before e's first task starts.
func (c *Control) SpawnInLoop(e *Engine) { e.spawnInLoop = true }

// RegisterEngine adds an engine with the given configuration.
func (c *Control) RegisterEngine(name string, cfg EngineRuntimeConfig) (*Engine, error) {
	if cfg.EngineID != 0 {
		return nil, fmt.Errorf("sched: register engine %q: engineId %d given; RegisterEngine assigns ids: %w", name, cfg.EngineID, ErrConfig)
	}
	cfg, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	e := &Engine{id: c.s.nextEngine.Add(1), name: name, s: c.s, banks: make([]liveBank, len(c.s.workers)), mem: vmloop.NewBudget(cfg.Limits.MemoryBytes),
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
