package jade_test

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/sched"
)

// prefixRE matches a package prefix: one of the module's packages (or a
// backend name standing for one) at the start of an error or after ": ".
var prefixRE = regexp.MustCompile(`(^|: )(jade|bus|sched|vmloop|jasm|chans|timerwheel|iosys|evpoll|uring|io_uring|epoll|kqueue|iocp|native|jprof|jtrace): `)

// requireOnePrefix fails unless err names one package, once, at its start,
// where the host called it ("jade", or "bus" for the bus's own API).
func requireOnePrefix(t *testing.T, what, pkg string, err error) {
	t.Helper()
	require.Error(t, err, what)
	msg := err.Error()
	t.Logf("%s: %s", what, msg)
	require.True(t, strings.HasPrefix(msg, pkg+": "), "%s: %q does not start with %q", what, msg, pkg+": ")
	require.Len(t, prefixRE.FindAllString(msg, -1), 1, "%s: %q carries more than one package prefix", what, msg)
	require.NotContains(t, msg, "jade: jade:", what)
}

const errorsProg = `
.abi 1.2
.func wait() -> i64
  .local ev:ref, n:i64
  intr ev, event.new
  intr _, event.wait, ev
  const n, 0
  ret n
.end
`

// TestErrorsHaveOnePrefix walks the error paths of the host API that the
// other tests reach (a spawn over an engine's limit, a bad engine
// configuration, programs that do not assemble or verify, unknown
// functions, bad intrinsic registrations, misuse of events, channels and
// profiles) and fails if an error carries two package prefixes: the
// outermost layer names the operation once, and sentinels stay matchable.
func TestErrorsHaveOnePrefix(t *testing.T) {
	t.Setenv(sched.FlightEnv, "")
	_, err := jade.New(jade.Options{Workers: 1, FlightEvents: 1 << 40})
	requireOnePrefix(t, "new with a huge flight recorder", "jade", err)
	require.ErrorIs(t, err, sched.ErrConfig)

	rt, err := jade.New(jade.Options{Workers: 1})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Shutdown(context.Background()) })
	p, err := rt.Load("errors.jasm", []byte(errorsProg))
	require.NoError(t, err)

	lim, err := rt.RegisterEngine("lim", sched.EngineRuntimeConfig{Limits: sched.ResourceLimits{LiveTasks: 1}}, bus.CapAll)
	require.NoError(t, err)
	task, err := rt.SpawnWith(jade.SpawnOptions{Engine: lim}, p, "wait")
	require.NoError(t, err)
	_, err = rt.SpawnWith(jade.SpawnOptions{Engine: lim}, p, "wait")
	requireOnePrefix(t, "spawn over the live-task limit", "jade", err)
	require.ErrorIs(t, err, sched.ErrLimit)
	require.Contains(t, err.Error(), `engine "lim" has 1 live task (limit 1)`)
	_, err = hostbus.Member(rt).Spawn(hostbus.Member(lim), p, "wait")
	requireOnePrefix(t, "bus spawn over the live-task limit", "bus", err)
	require.NoError(t, task.Cancel())

	_, err = rt.RegisterEngine("bad", sched.EngineRuntimeConfig{ReductionLimit: -1}, bus.CapAll)
	requireOnePrefix(t, "register a bad engine config", "jade", err)
	require.ErrorIs(t, err, sched.ErrConfig)
	require.Contains(t, err.Error(), `"bad"`)
	_, err = hostbus.Bus(rt).RegisterEngine("bad", sched.EngineRuntimeConfig{ReductionLimit: -1}, bus.CapAll)
	requireOnePrefix(t, "bus: register a bad engine config", "bus", err)
	require.ErrorIs(t, lim.Update(jade.EngineConfig{ReductionLimit: -1}), jade.ErrConfig)
	requireOnePrefix(t, "update to a bad engine config", "jade", lim.Update(jade.EngineConfig{ReductionLimit: -1}))
	requireOnePrefix(t, "bus: update to a bad engine config", "bus", hostbus.Member(rt).UpdateConfig(hostbus.Member(lim), sched.EngineRuntimeConfig{ReductionLimit: -1}))

	_, err = rt.Load("bad.jasm", []byte(".abi 1.2\n.func f() -> i64\n  nosuchop\n.end\n"))
	requireOnePrefix(t, "load a program that does not assemble", "jade", err)
	require.Contains(t, err.Error(), "bad.jasm:")
	_, err = rt.Load("bad.jasm", []byte(".abi 1.2\n.func f() -> i64\n  .local s:ref\n  ret s\n.end\n"))
	requireOnePrefix(t, "load a program that does not verify", "jade", err)
	_, err = rt.Spawn(p, "nosuch")
	requireOnePrefix(t, "spawn an unknown function", "jade", err)
	_, err = rt.Spawn(nil, "wait")
	requireOnePrefix(t, "spawn a nil program", "jade", err)
	_, err = rt.Run(context.Background(), p, "nosuch")
	requireOnePrefix(t, "run an unknown function", "jade", err)

	requireOnePrefix(t, "register an intrinsic without a family", "jade",
		rt.RegisterIntrinsic("nofamily", nil, jade.TI64, 0, func(*jade.Call) (jade.Value, error) { return jade.I64(0), nil }))
	requireOnePrefix(t, "register a central intrinsic", "jade",
		rt.RegisterIntrinsic("task.spawn", nil, jade.TI64, 0, func(*jade.Call) (jade.Value, error) { return jade.I64(0), nil }))
	requireOnePrefix(t, "register a nil blocking intrinsic", "jade",
		rt.RegisterBlockingIntrinsic("host.block", nil, jade.TI64, 0, nil))

	requireOnePrefix(t, "signal a non-event", "jade", rt.Signal(jade.I64(1)))
	requireOnePrefix(t, "broadcast a non-event", "jade", rt.Broadcast(jade.I64(1)))
	_, err = rt.NewChan(jade.ChanI64, -1)
	requireOnePrefix(t, "new channel of a negative capacity", "jade", err)
	ch, err := rt.NewChan(jade.ChanI64, 1)
	require.NoError(t, err)
	require.NoError(t, rt.CloseChan(ch))
	err = rt.Send(context.Background(), ch, jade.I64(1))
	requireOnePrefix(t, "send on a closed channel", "jade", err)
	require.ErrorIs(t, err, jade.ErrChanClosed)
	requireOnePrefix(t, "send on a non-channel", "jade", rt.Send(context.Background(), jade.I64(1), jade.I64(1)))
	requireOnePrefix(t, "stop a profile never started", "jade", rt.Observe().StopProfile())
	var trace bytes.Buffer
	require.NoError(t, rt.Observe().StartTrace(&trace))
	requireOnePrefix(t, "start a second trace", "jade", rt.Observe().StartTrace(&trace))
	require.NoError(t, rt.Observe().StopTrace())
	requireOnePrefix(t, "stop a trace never started", "jade", rt.Observe().StopTrace())
	require.ErrorIs(t, rt.Observe().StopProfile(), jade.ErrNoProfile)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	task, err = rt.Spawn(p, "wait")
	require.NoError(t, err)
	_, err = task.Wait(ctx)
	requireOnePrefix(t, "wait with an ended context", "jade", err)
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, task.Cancel())
}
