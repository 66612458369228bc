// Package testkit is the scaffolding that the tests of the packages above
// the scheduler share: a runtime or bus that t's cleanup shuts down and
// then checks for leaked goroutines, helpers that load, run and await
// programs and fail the test on an error, a poll for a condition, a loop
// over the Linux completion backends, and the canonical programs of
// examples/ (fib.jasm, fanout.jasm), embedded once there.
//
// It imports package jade, and so bus, sched and vmloop: only external
// test packages (package sched_test, bus_test, ...) can use it, never a
// package's internal tests, which would make an import cycle.
package testkit

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/examples"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// Fib is examples/fib.jasm: naive recursive Fibonacci (fib(n); main runs
// fib(30) = 832040).
var Fib = string(examples.Fib)

// Fanout is examples/fanout.jasm: fanout(n) spawns n tasks that yield once
// and joins them, returning the sum of 0..n-1 (RunFanout).
var Fanout = string(examples.Fanout)

// Patience bounds every wait of the kit (Run, Await, WaitFor): long enough
// for a loaded machine under the race detector, so that only a hang fails.
const Patience = 3 * time.Minute

// CloseTimeout bounds the Close or Shutdown that the cleanup of a
// runtime of the kit makes.
const CloseTimeout = time.Minute

// Runtime starts a jade runtime with opts for t. t's cleanup closes it
// (Close: a drain, then the shutdown), fails t if Close fails, and then
// fails t if a goroutine started since Runtime was called still runs
// (after up to leakPatience for their last steps): nothing of the runtime
// outlives its Close. Cleanups registered after
// Runtime run before it (t.Cleanup is last in, first out), so a server or
// client that the test stops in a later cleanup is gone by then.
func Runtime(t testing.TB, opts jade.Options) *jade.Runtime {
	t.Helper()
	return start(t, opts, "close", (*jade.Runtime).Close)
}

// ForcedRuntime is Runtime for a test that leaves tasks waiting at its
// end: the cleanup is the forced Shutdown (every task cancelled) instead
// of Close's drain, which would wait for them. t fails if a task had to
// be abandoned at the deadline, and otherwise, as Runtime, if a goroutine
// started since ForcedRuntime was called still runs.
func ForcedRuntime(t testing.TB, opts jade.Options) *jade.Runtime {
	t.Helper()
	return start(t, opts, "shutdown", (*jade.Runtime).Shutdown)
}

// start is Runtime and ForcedRuntime: stop, named what, ends the runtime
// in t's cleanup.
func start(t testing.TB, opts jade.Options, what string, stop func(*jade.Runtime, context.Context) error) *jade.Runtime {
	t.Helper()
	before := goleak.IgnoreCurrent()
	rt, err := jade.New(opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), CloseTimeout)
		defer cancel()
		if err := stop(rt, ctx); err != nil {
			t.Errorf("%s: %v", what, err)
			return // abandoned tasks keep their goroutines: not a leak to report
		}
		verifyNone(t, before)
	})
	return rt
}

// leakPatience bounds how long a cleanup of the kit waits for the
// goroutines of a runtime or bus it shut down to exit (a loaded machine
// may schedule their last steps late); a passing check returns at once.
var leakPatience = 10 * time.Second

// verifyNone fails t if goroutines other than those of before remain
// after leakPatience (goleak.Find retries for a short while on each call).
func verifyNone(t testing.TB, before goleak.Option) {
	t.Helper()
	deadline := time.Now().Add(leakPatience)
	for {
		err := goleak.Find(before)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("goroutines left after the shutdown: %v", err)
			return
		}
	}
}

// Load assembles and verifies src on rt under the name <test name>.jasm.
func Load(t testing.TB, rt *jade.Runtime, src string) *vmloop.Program {
	t.Helper()
	p, err := rt.Load(t.Name()+".jasm", []byte(src))
	require.NoError(t, err)
	return p
}

// Run runs fn of p on rt with args and returns its outcome; t fails if
// the run does not complete within Patience.
func Run(t testing.TB, rt *jade.Runtime, p *vmloop.Program, fn string, args ...vmloop.Value) sched.Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Patience)
	defer cancel()
	o, err := rt.Run(ctx, p, fn, args...)
	require.NoError(t, err, "run %s", fn)
	return o
}

// RunFanout runs fanout(n) of p, a program loaded from Fanout.
func RunFanout(t testing.TB, rt *jade.Runtime, p *vmloop.Program, n int64) sched.Outcome {
	t.Helper()
	return Run(t, rt, p, "fanout", vmloop.I64(n))
}

// Await waits for task's outcome; t fails if it does not come within
// Patience.
func Await(t testing.TB, task *sched.Task) sched.Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Patience)
	defer cancel()
	o, err := bus.Await(ctx, task)
	require.NoError(t, err, "await task %d", task.ID())
	return o
}

// WaitFor polls cond, at once and then every millisecond, until it holds,
// and fails t (Fatal) if it does not within Patience. The failure says
// msgAndArgs: a format and its arguments as in require, or a single
// func() string, called then, to report the state that was not reached.
func WaitFor(t testing.TB, cond func() bool, msgAndArgs ...any) {
	t.Helper()
	deadline := time.Now().Add(Patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not reached in %v: %s", Patience, message(msgAndArgs))
		}
		time.Sleep(time.Millisecond)
	}
}

// message renders WaitFor's msgAndArgs.
func message(msgAndArgs []any) string {
	if len(msgAndArgs) == 0 {
		return "condition"
	}
	if f, ok := msgAndArgs[0].(func() string); ok && len(msgAndArgs) == 1 {
		return f()
	}
	if format, ok := msgAndArgs[0].(string); ok {
		return fmt.Sprintf(format, msgAndArgs[1:]...)
	}
	return fmt.Sprint(msgAndArgs...)
}

// Workers runs f once per worker count in counts, each as a subtest named
// workers=N.
func Workers(t *testing.T, counts []int, f func(t *testing.T, workers int)) {
	t.Helper()
	for _, n := range counts {
		t.Run(fmt.Sprintf("workers=%d", n), func(t *testing.T) { f(t, n) })
	}
}
