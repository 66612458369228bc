package sched

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/jadevm/jade/vmloop"
)

// DefaultReductionLimit is the reductions one dispatch may spend before the
// task is preempted. At ~2–3 ns per instruction on the reference machine
// (2 vCPU EPYC) a full slice lasts roughly 50–75 µs (README, "Results").
const DefaultReductionLimit = 25_000

// MaxReductionLimit is the runtime-wide cap on ReductionLimit: larger
// budgets would let one task hold a worker for tens of milliseconds.
const MaxReductionLimit = 10_000_000

// DefaultMaxLiveTasks bounds the live tasks of one engine.
const DefaultMaxLiveTasks = 1 << 22

// EngineRuntimeConfig is everything the scheduler knows about an engine
// (spec §4.2, S-14): it never learns what the engine means.
type EngineRuntimeConfig struct {
	// ReductionLimit is the budget of one dispatch (0: default).
	ReductionLimit int64
	// MaxLiveTasks bounds the engine's live tasks; a spawn beyond it throws
	// a catchable ResourceError to the spawner (0: default).
	MaxLiveTasks int64
	// TaskLimits bound each task (stack depth, heap bytes); exhausting one
	// traps that task (zero fields: vmloop.DefaultLimits).
	TaskLimits vmloop.Limits
	// GoLoop runs the engine's tasks on the pure-Go VM loop even when the
	// cgo loop of package native is available and enabled (the global
	// switches are native.Disable and JADE_NATIVE=0).
	GoLoop bool
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
	if c.MaxLiveTasks == 0 {
		c.MaxLiveTasks = DefaultMaxLiveTasks
	}
	if c.MaxLiveTasks < 0 {
		return c, fmt.Errorf("sched: engine config: maxLiveTasks %d is negative: %w", c.MaxLiveTasks, ErrConfig)
	}
	if c.TaskLimits.MaxFrames == 0 {
		c.TaskLimits.MaxFrames = vmloop.DefaultLimits.MaxFrames
	}
	if c.TaskLimits.MaxHeapBytes == 0 {
		c.TaskLimits.MaxHeapBytes = vmloop.DefaultLimits.MaxHeapBytes
	}
	if c.TaskLimits.MaxFrames < 1 || c.TaskLimits.MaxHeapBytes < 1 {
		return c, fmt.Errorf("sched: engine config: task limits must be positive (frames %d, heap %d): %w",
			c.TaskLimits.MaxFrames, c.TaskLimits.MaxHeapBytes, ErrConfig)
	}
	return c, nil
}

// Engine is the scheduler's view of one engine: its id, its current
// runtime configuration and its counters.
type Engine struct {
	id   uint32
	name string
	cfg  atomic.Pointer[EngineRuntimeConfig] // replaced whole by UpdateEngine
	live atomic.Int64                        // tasks spawned and not completed
	// labels is the pprof label context of the engine's tasks, built once
	// at registration (worker goroutines switch to it per dispatch).
	labels context.Context
}

// ID returns the engine id.
func (e *Engine) ID() uint32 { return e.id }

// Name returns the engine's name.
func (e *Engine) Name() string { return e.name }

// Config returns the current runtime configuration (a copy).
func (e *Engine) Config() EngineRuntimeConfig { return *e.cfg.Load() }

// LiveTasks returns the number of live tasks of the engine.
func (e *Engine) LiveTasks() int64 { return e.live.Load() }
