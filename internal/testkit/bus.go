package testkit

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/timerwheel"
	"github.com/jadevm/jade/vmloop"
	"github.com/jadevm/jade/vmloop/jasm"
)

// BusShutdownTimeout bounds the Shutdown of a bus made by Bus: a task
// still running then (a host call that ignores its context, say) is
// abandoned, which fails the test.
const BusShutdownTimeout = 5 * time.Second

// Bus makes a bus with cfg for t, calls setup (when not nil) to register
// the engines and intrinsics that must exist before the bus starts, and
// starts it. t's cleanup shuts it down (forced: every task is cancelled),
// fails t if a task had to be abandoned, and otherwise, as Runtime, fails
// t if a goroutine started since Bus was called still runs.
func Bus(t testing.TB, cfg bus.Config, setup func(b *bus.Bus)) *bus.Bus {
	t.Helper()
	before := goleak.IgnoreCurrent()
	b, err := bus.New(cfg)
	require.NoError(t, err)
	if setup != nil {
		setup(b)
	}
	require.NoError(t, b.Start())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), BusShutdownTimeout)
		defer cancel()
		if stuck := b.Shutdown(ctx); len(stuck) > 0 {
			t.Errorf("shutdown abandoned %s", sched.SummarizeReports(stuck, sched.MaxListedReports))
			return // their goroutines are reported as the abandoned tasks
		}
		verifyNone(t, before)
	})
	return b
}

// Engine registers the engine name with cfg and caps on b (in Bus's
// setup) and returns the host's token for it.
func Engine(t testing.TB, b *bus.Bus, name string, cfg sched.EngineRuntimeConfig, caps bus.Capability) *bus.Member {
	t.Helper()
	m, err := b.RegisterEngine(name, cfg, caps)
	require.NoError(t, err)
	return m
}

// Wheel returns a fresh default timer-wheel configuration, for an
// engine's EngineRuntimeConfig.TimerWheel.
func Wheel() *timerwheel.TimerWheelConfig {
	w := timerwheel.DefaultConfig()
	return &w
}

// Prog assembles src and loads it on b.
func Prog(t testing.TB, b *bus.Bus, src string) *vmloop.Program {
	t.Helper()
	p, err := jasm.Assemble(t.Name()+".jasm", []byte(src))
	require.NoError(t, err)
	require.NoError(t, b.Load(p))
	return p
}

// Spawn spawns fn of p with args as a task of m's engine.
func Spawn(t testing.TB, m *bus.Member, p *vmloop.Program, fn string, args ...vmloop.Value) *sched.Task {
	t.Helper()
	task, err := m.Spawn(nil, p, fn, args...)
	require.NoError(t, err, "spawn %s", fn)
	return task
}

// SpawnAwait spawns fn of p with args on m's engine and awaits its
// outcome.
func SpawnAwait(t testing.TB, m *bus.Member, p *vmloop.Program, fn string, args ...vmloop.Value) sched.Outcome {
	t.Helper()
	return Await(t, Spawn(t, m, p, fn, args...))
}
