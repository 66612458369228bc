package jade

import (
	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/timerwheel"
	"github.com/jadevm/jade/vmloop"
)

// What a host needs, under one import: the types of the bus, scheduler and
// VM packages a host names, their constants, and the value constructors.
// They are aliases, so values move freely between this package and the
// lower-level ones (bus, sched, vmloop) for hosts that need those.

type (
	// Program is a verified (or to-be-verified) bytecode program.
	Program = vmloop.Program
	// Type is a register type: TI64, TF64, TRef, TVoid.
	Type = vmloop.Type
	// Capability is a set of grants of an engine (CapSpawn, ..., CapAll).
	Capability = bus.Capability
	// Call is one call of a host intrinsic (its arguments, the calling
	// task and engine, Suspend).
	Call = bus.Call
	// HostFunc is a host intrinsic that returns at once or suspends.
	HostFunc = bus.HostFunc
	// BlockingFunc is a host intrinsic that may block; it runs on the
	// runtime's pool of goroutines (RegisterBlockingIntrinsic).
	BlockingFunc = bus.BlockingFunc
	// EngineConfig is an engine's runtime configuration: reduction limit,
	// timer wheel, resource limits, overrun policy.
	EngineConfig = sched.EngineRuntimeConfig
	// ResourceLimits are an engine's limits (live tasks, memory, I/O in
	// flight, blocking calls, ...); zero fields take the defaults.
	ResourceLimits = sched.ResourceLimits
	// OutcomeKind says how a task ended: Success, Failure, Trapped or
	// Cancelled.
	OutcomeKind = sched.OutcomeKind
	// Metrics is a read-only snapshot of the scheduler.
	Metrics = sched.Metrics
	// WorkerMetrics are one worker's counters and times in Metrics.
	WorkerMetrics = sched.WorkerMetrics
	// EngineMetrics are one engine's gauges, jobs and latency histograms
	// in Metrics.
	EngineMetrics = sched.EngineMetrics
	// Histogram is a latency histogram in Metrics.
	Histogram = sched.Histogram
	// TaskReport describes one live task (id, engine, state, where).
	TaskReport = sched.TaskReport
	// TaskState is a task's state in a TaskReport (Runnable, Running,
	// Waiting, ...).
	TaskState = sched.State
	// LongRun is a long slice, host call or run-queue wait that crossed
	// an engine's threshold (Options.OnLong).
	LongRun = sched.LongRun
	// TimerWheelConfig is an engine's timer wheel geometry.
	TimerWheelConfig = timerwheel.TimerWheelConfig
	// OverrunPolicy says what a periodic job does when it falls behind.
	OverrunPolicy = timerwheel.OverrunPolicy
)

// Register types.
const (
	TVoid = vmloop.TVoid
	TI64  = vmloop.TI64
	TF64  = vmloop.TF64
	TRef  = vmloop.TRef
)

// Capabilities.
const (
	CapSpawn       = bus.CapSpawn
	CapSpawnOther  = bus.CapSpawnOther
	CapCancelOther = bus.CapCancelOther
	CapConfig      = bus.CapConfig
	CapHost        = bus.CapHost
	CapIO          = bus.CapIO
	CapUser0       = bus.CapUser0
	CapAll         = bus.CapAll
)

// Outcome kinds.
const (
	Success   = sched.Success
	Failure   = sched.Failure
	Trapped   = sched.Trapped
	Cancelled = sched.Cancelled
)

// I64 makes an i64 value.
func I64(v int64) Value { return vmloop.I64(v) }

// F64 makes an f64 value.
func F64(v float64) Value { return vmloop.F64(v) }

// Str makes a string value.
func Str(s string) Value { return vmloop.Str(s) }

// Bytes makes a byte-buffer value holding a copy of b.
func Bytes(b []byte) Value { return vmloop.Bytes(b) }

// StrArray makes an array value of strings (main's args).
func StrArray(ss []string) Value { return vmloop.StrArray(ss) }

// Void is the value of no value (a void function's result).
func Void() Value { return vmloop.Void() }

// Observer reads a runtime without changing its tasks: the metrics, the
// task list, CPU and heap profiles of the Jade code, the scheduler trace
// and the flight recorder (spec §4.5, docs/OBSERVABILITY.md).
// Runtime.Observe returns it.
type Observer struct{ r *Runtime }

// Observe returns the runtime's observer.
func (r *Runtime) Observe() *Observer { return &r.obs }

// Metrics returns a snapshot of the scheduler's metrics.
func (o *Observer) Metrics() Metrics { return o.r.bus.Scheduler().Metrics() }

// Tasks lists the live tasks by id.
func (o *Observer) Tasks() []TaskReport { return o.r.bus.Scheduler().Tasks() }

// Task states (TaskReport.State).
const (
	Runnable  = sched.Runnable
	Running   = sched.Running
	Waiting   = sched.Waiting
	Completed = sched.Completed
)

// Overrun policies of periodic jobs (Options.OverrunPolicy).
const (
	PolicyInherit = timerwheel.PolicyInherit
	Drift         = timerwheel.Drift
	Skip          = timerwheel.Skip
	Queue         = timerwheel.Queue
)

// Errors a host matches with errors.Is.
var (
	// ErrConfig: an engine configuration or option is invalid.
	ErrConfig = sched.ErrConfig
	// ErrLimit: a resource limit (live tasks, memory, blocking calls,
	// ...) was reached.
	ErrLimit = sched.ErrLimit
	// ErrStopped: the runtime is stopping or stopped.
	ErrStopped = sched.ErrStopped
	// ErrDenied: the engine lacks a capability the command needs.
	ErrDenied = bus.ErrDenied
	// ErrForeign: a value (event, channel, task) of another runtime.
	ErrForeign = bus.ErrForeign
	// ErrChanMemory: a message from the host exceeds the memory budget.
	ErrChanMemory = bus.ErrChanMemory
)
