// Package hostbus lets code inside this module (cmd/jade, the benchmarks,
// the perf harness, the debug server and tests) reach the RuntimeBus, the
// engine tokens and the task records under the values of package jade.
//
// Package jade hands none of them out: a host outside this module sees only
// the root package's types, so no exported path leads from a jade.Runtime
// to its scheduler's control (spec S-16). The accessors are set by package
// jade when it is initialised; an internal package cannot be imported from
// outside this module, so they stay inside it.
package hostbus

import (
	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/sched"
)

// Hooks are the accessors package jade sets at init. Each takes the value
// of package jade (a *jade.Runtime, *jade.Engine or *jade.Task) as any,
// because this package sits below package jade and cannot name its types.
type Hooks struct {
	// Bus returns a runtime's RuntimeBus.
	Bus func(rt any) *bus.Bus
	// Member returns an engine's token on the bus (the default engine's
	// for a runtime).
	Member func(engOrRuntime any) *bus.Member
	// Task returns the scheduler's record of a task.
	Task func(task any) *sched.Task
}

var hooks Hooks

// Set installs the accessors; package jade calls it once, at init.
func Set(h Hooks) { hooks = h }

// Bus returns the RuntimeBus of a *jade.Runtime.
func Bus(rt any) *bus.Bus { return hooks.Bus(rt) }

// Scheduler returns the scheduler of a *jade.Runtime, for its read-only
// observers (metrics, the task list, trace and sampling).
func Scheduler(rt any) *sched.Scheduler { return hooks.Bus(rt).Scheduler() }

// Member returns the bus token of a *jade.Engine, or of a *jade.Runtime's
// default engine.
func Member(engOrRuntime any) *bus.Member { return hooks.Member(engOrRuntime) }

// Task returns the scheduler's record of a *jade.Task.
func Task(t any) *sched.Task { return hooks.Task(t) }
