// Package jade is the embedding API of the Jade VM scheduler for Go hosts:
// load and verify a program, start a runtime, spawn tasks with JadeValue
// arguments on engines of their own, await their outcomes, exchange
// messages with them, register host intrinsics, read the metrics and the
// task list, and take CPU and heap profiles and traces. A host needs no
// other package of the module: the types it names are here, most of them
// aliases of the implementation packages' types.
//
// A Runtime owns a RuntimeBus and the scheduler under it; it hands out
// neither. Every change to scheduler state goes through the bus, checked
// against the acting engine's capabilities (spec S-16, S-20): a host's
// commands act as the default engine, "main", which holds every
// capability. See ARCHITECTURE.md for the layers and README.md for a tour.
//
// # Compatibility
//
// The module follows semantic versioning for two things: this package's
// API, and the program model (the ISA and ABI versions of docs/ISA.md, the
// assembly language of docs/JASM.md, and the spec's invariants S-1…S-20).
// Within a major version, an exported name here keeps its meaning, a
// program that verifies keeps verifying and behaving as documented, and
// intrinsics and opcodes are only appended under a new ABI minor version.
// Before v1.0.0 a minor version may still break this package's API; the
// CHANGELOG names every such change. The other packages of the module
// (bus, sched, vmloop, native, timerwheel, uring, kqueue, iocp, perf,
// bench) are implementation packages with no compatibility promise, and
// the packages under internal/ cannot be imported from outside it.
package jade

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/errs"
	"github.com/jadevm/jade/internal/hostbus"
	_ "github.com/jadevm/jade/native" // the cgo VM loop, on by default where cgo is available
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/timerwheel"
	"github.com/jadevm/jade/vmloop"
	"github.com/jadevm/jade/vmloop/jasm"
)

// Value is a JadeValue, the format at every boundary (spec §5.3).
type Value = vmloop.Value

// Outcome is how a task ended: Success, Failure, Trap or Cancelled.
type Outcome = sched.Outcome

// Options configure a Runtime. Zero fields take the documented defaults.
type Options struct {
	// Workers is the number of worker threads (0: $JADE_WORKERS when set,
	// else GOMAXPROCS minus one P kept for the host and the GC; the runtime
	// raises GOMAXPROCS to at least workers+1).
	Workers int
	// PinCPUs pins each worker thread to one allowed CPU (Linux; a no-op
	// elsewhere).
	PinCPUs bool
	// ReductionLimit is the default engine's budget per dispatch
	// (default sched.DefaultReductionLimit).
	ReductionLimit int64
	// Limits are the default engine's resource limits (zero fields:
	// defaults).
	Limits ResourceLimits
	// TimerWheel is the default engine's timer wheel geometry (nil:
	// timerwheel.DefaultConfig(); the default engine always has a wheel).
	TimerWheel *TimerWheelConfig
	// OverrunPolicy is the default engine's policy for periodic jobs.
	OverrunPolicy OverrunPolicy
	// Stdout receives io.print_* output (default os.Stdout).
	Stdout io.Writer
	// GoLoop runs the default engine on the pure-Go VM loop instead of the
	// cgo loop (package native; also JADE_NATIVE=0 or -tags purego).
	GoLoop bool
	// BlockingPool is how many blocking host calls run at once
	// (RegisterBlockingIntrinsic; 0: bus.DefaultBlockingPool).
	BlockingPool int
	// ProfilePeriod is the time between two samples of a busy worker in
	// a CPU profile (StartProfile; 0: jprof.DefaultPeriod, 10 ms).
	ProfilePeriod time.Duration
	// LatencySample: one enqueue in LatencySample is timestamped for the
	// latency histograms (0: sched.DefaultLatencySample, 256; 1: all;
	// negative: none). See sched.Config.LatencySample.
	LatencySample int
	// TaskStats keeps per-task statistics (slices, reductions, time
	// Runnable) for the default engine's tasks (sched.MetricsConfig).
	TaskStats bool
	// FlightEvents switches the flight recorder on: every worker keeps
	// its last FlightEvents scheduler events for DumpTrace (0:
	// $JADE_FLIGHT, off when unset, 1 for sched.DefaultFlightEvents;
	// negative: off), at most jtrace.MaxFlightEvents (New refuses more
	// with an error wrapping sched.ErrConfig). See docs/TRACE.md.
	FlightEvents int
	// LongSlice, LongCall and LongWait are the default engine's
	// thresholds for long slices, host calls and sampled run-queue waits
	// (sched.EngineRuntimeConfig; 0: off).
	LongSlice, LongCall, LongWait time.Duration
	// OnLong receives the long slices, host calls and waits (at most one
	// a second; it runs on a worker and must not block). Nil: each is
	// logged with the standard log package and, with the flight
	// recorder on, a dump is written to FlightDir (at most one every
	// 10 s) and its file named in the log.
	OnLong func(LongRun)
	// FlightDir is where automatic flight-recorder dumps go (default
	// os.TempDir()).
	FlightDir string
}

// Runtime is a running Jade VM: a bus, a scheduler with its workers and a
// default engine ("main") holding every capability.
type Runtime struct {
	bus  *bus.Bus
	def  *bus.Member // the default engine's token: the host's commands go through it
	main *Engine     // def, as the host sees it

	obs  Observer // Observe; obs.r is the runtime itself
	prof profiles // StartProfile, StartHeapProfile (profile.go)
	tr   tracing  // automatic flight-recorder dumps (trace.go)
}

// New starts a runtime.
func New(opts Options) (*Runtime, error) {
	r := &Runtime{prof: profiles{period: opts.ProfilePeriod}, tr: tracing{dir: opts.FlightDir}}
	onLong := opts.OnLong
	if onLong == nil {
		onLong = r.reportLong
	}
	b, err := bus.New(bus.Config{Workers: opts.Workers, PinCPUs: opts.PinCPUs, Stdout: opts.Stdout, BlockingPool: opts.BlockingPool,
		LatencySample: opts.LatencySample, FlightEvents: opts.FlightEvents, OnLong: onLong})
	if err != nil {
		return nil, errs.Wrap("jade", "new", err)
	}
	wheel := opts.TimerWheel
	if wheel == nil {
		d := timerwheel.DefaultConfig()
		wheel = &d
	}
	def, err := b.RegisterEngine("main", sched.EngineRuntimeConfig{
		ReductionLimit: opts.ReductionLimit, Limits: opts.Limits, TimerWheel: wheel,
		OverrunPolicy: opts.OverrunPolicy, GoLoop: opts.GoLoop,
		Metrics:   sched.MetricsConfig{TaskStats: opts.TaskStats},
		LongSlice: opts.LongSlice, LongCall: opts.LongCall, LongWait: opts.LongWait,
	}, bus.CapAll)
	if err != nil {
		return nil, errs.Wrap("jade", "new", err)
	}
	if err := b.Start(); err != nil {
		return nil, errs.Wrap("jade", "new", err)
	}
	r.bus, r.def = b, def
	r.main = &Engine{m: def, rt: r}
	r.obs.r = r
	return r, nil
}

func init() {
	hostbus.Set(hostbus.Hooks{
		Bus: func(rt any) *bus.Bus { return rt.(*Runtime).bus },
		Member: func(v any) *bus.Member {
			if e, ok := v.(*Engine); ok {
				return e.m
			}
			return v.(*Runtime).def
		},
		Task: func(t any) *sched.Task { return t.(*Task).t },
	})
}

// Assemble assembles .jasm source (errors name file:line:col). The result
// still has to be verified: use Runtime.Load, or vmloop.Verify.
func Assemble(filename string, src []byte) (*Program, error) {
	return jasm.Assemble(filename, src)
}

// Load assembles and verifies a program against the central intrinsic
// table and this runtime's host intrinsics.
func (r *Runtime) Load(filename string, src []byte) (*Program, error) {
	p, err := jasm.Assemble(filename, src)
	if err != nil {
		return nil, errs.Relabel("jade", "load", err)
	}
	if err := r.bus.Load(p); err != nil {
		return nil, errs.Relabel("jade", "load", err)
	}
	return p, nil
}

// Verify verifies an already built or decoded program for this runtime.
func (r *Runtime) Verify(p *Program) error {
	return errs.Relabel("jade", "verify", r.bus.Load(p))
}

// Run spawns fn and waits for its outcome.
func (r *Runtime) Run(ctx context.Context, p *Program, fn string, args ...Value) (Outcome, error) {
	t, err := r.Spawn(p, fn, args...)
	if err != nil {
		return Outcome{Kind: sched.NoOutcome}, err
	}
	return t.Wait(ctx)
}

// RegisterIntrinsic registers a host intrinsic (see bus.HostFunc). Tasks
// of the default engine hold every capability; other engines need the
// capability need.
func (r *Runtime) RegisterIntrinsic(name string, params []Type, result Type, need Capability, fn HostFunc) error {
	return errs.Relabel("jade", "register intrinsic", r.bus.RegisterIntrinsic(name, params, result, need, fn))
}

// RegisterBlockingIntrinsic registers a host intrinsic that may block (a
// database driver, DNS, a file system): it runs on the bus's blocking
// pool, never on a worker, while its task waits (see
// bus.Bus.RegisterBlockingIntrinsic).
func (r *Runtime) RegisterBlockingIntrinsic(name string, params []Type, result Type, need Capability, fn BlockingFunc) error {
	return errs.Relabel("jade", "register intrinsic", r.bus.RegisterBlockingIntrinsic(name, params, result, need, fn))
}

// Shutdown is the forced shutdown: it stops and writes a CPU or heap
// profile still running, cancels every task, waits until they
// complete or ctx ends, and stops the workers. Tasks still live at the
// deadline are summarised in the error (counts by engine and state, then
// the first sched.MaxListedReports by id, state and function@pc) and
// abandoned untouched: VM and FFI code is never interrupted (spec §3.6).
func (r *Runtime) Shutdown(ctx context.Context) error {
	perr := r.stopProfiles()
	stuck := r.bus.Shutdown(ctx)
	if perr != nil {
		perr = errs.Wrap("jade", "shutdown", perr)
	}
	if len(stuck) == 0 {
		return perr
	}
	return errors.Join(fmt.Errorf("jade: shutdown: abandoned at the deadline: %s", sched.SummarizeReports(stuck, sched.MaxListedReports)), perr)
}

// NewEvent makes an event that the host can pass to tasks and signal.
func (r *Runtime) NewEvent() Value { return r.def.NewEvent() }

// Signal signals an event made by NewEvent or received from a task.
func (r *Runtime) Signal(ev Value) error { return errs.Relabel("jade", "signal", r.def.Signal(ev)) }

// Broadcast wakes every task waiting on ev.
func (r *Runtime) Broadcast(ev Value) error {
	return errs.Relabel("jade", "broadcast", r.def.Broadcast(ev))
}
