package jade

import (
	"errors"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/errs"
)

// Engine is the host's token for one engine of a runtime: a named group of
// tasks with its own reduction limit, timer wheel, resource limits and
// capabilities (spec §3.2). The default engine, "main", holds every
// capability; Runtime.Main returns it.
type Engine struct {
	m  *bus.Member
	rt *Runtime
}

// Name returns the engine's name.
func (e *Engine) Name() string { return e.m.Engine().Name() }

// Caps returns the capabilities the engine's tasks hold.
func (e *Engine) Caps() Capability { return e.m.Caps() }

// Config returns the engine's current runtime configuration.
func (e *Engine) Config() EngineConfig { return e.m.Engine().Config() }

// Update replaces the engine's runtime configuration (reduction limit,
// resource limits, long-run thresholds, ...). Tasks already running take
// the new reduction limit at their next dispatch. The default engine
// makes the change, so it needs no capability of e; an invalid
// configuration is refused with an error wrapping ErrConfig.
func (e *Engine) Update(cfg EngineConfig) error {
	return errs.Relabel("jade", "update engine", e.rt.def.UpdateConfig(e.m, cfg))
}

// LiveTasks returns the engine's live tasks. A task counts until its worker
// has retired it, a moment after its outcome is published: right after a
// Task.Wait returns, the task may still count.
func (e *Engine) LiveTasks() int64 { return e.m.Engine().LiveTasks() }

// MemoryBytes returns the bytes counted in the engine's memory budget
// (its tasks' heaps, messages, held arguments).
func (e *Engine) MemoryBytes() int64 { return e.m.Engine().MemoryBytes() }

// Main returns the default engine, "main".
func (r *Runtime) Main() *Engine { return r.main }

// RegisterEngine declares another engine with its runtime configuration
// and capabilities; spawn on it with SpawnWith.
func (r *Runtime) RegisterEngine(name string, cfg EngineConfig, caps Capability) (*Engine, error) {
	m, err := r.bus.RegisterEngine(name, cfg, caps)
	if err != nil {
		return nil, errs.Relabel("jade", "register engine", err)
	}
	return &Engine{m: m, rt: r}, nil
}

// SpawnOptions say where a task runs and what it is called. The zero
// value spawns an unnamed task on the default engine.
type SpawnOptions struct {
	// Engine runs the task (nil: the default engine). The default engine
	// spawns it, so the host needs no capability of Engine.
	Engine *Engine
	// Name labels the task's CPU profile samples and shows in task dumps,
	// /debug/tasks and shutdown reports (at most 256 bytes; longer names
	// are cut). Tasks it spawns do not inherit it.
	Name string
}

// errOtherRuntime refuses an engine of another runtime.
var errOtherRuntime = errors.New("the engine belongs to another runtime")

// Spawn starts function fn of p as a task of the default engine.
func (r *Runtime) Spawn(p *Program, fn string, args ...Value) (*Task, error) {
	return r.SpawnWith(SpawnOptions{}, p, fn, args...)
}

// SpawnWith starts function fn of p as a task, on the engine and with the
// name that o gives.
func (r *Runtime) SpawnWith(o SpawnOptions, p *Program, fn string, args ...Value) (*Task, error) {
	target := r.def
	if o.Engine != nil {
		if o.Engine.rt != r {
			return nil, errs.Wrap("jade", "spawn", errOtherRuntime)
		}
		target = o.Engine.m
	}
	t, err := r.def.SpawnNamed(target, o.Name, p, fn, args...)
	if err != nil {
		return nil, errs.Relabel("jade", "spawn", err)
	}
	return &Task{t: t, rt: r}, nil
}
