package bus_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/timerwheel"
	"github.com/jadevm/jade/vmloop"
)

// timeBus returns a started bus with Workers workers and an engine "t"
// with a timer wheel (and the given limits) holding every capability.
func timeBus(t testing.TB, workers int, lim sched.ResourceLimits) (*bus.Bus, *bus.Member) {
	t.Helper()
	var m *bus.Member
	b := testkit.Bus(t, bus.Config{Workers: workers}, func(b *bus.Bus) {
		m = testkit.Engine(t, b, "t", sched.EngineRuntimeConfig{TimerWheel: testkit.Wheel(), Limits: lim}, bus.CapAll)
	})
	return b, m
}

const timeProg = `
.abi 1.1
.func sleep(d:i64) -> i64
  .local t0:i64, t1:i64
  intr t0, time.now
  intr _, time.sleep, d
  intr t1, time.now
  sub  t1, t1, t0
  ret  t1
.end
.func sleep_until(d:i64) -> i64
  .local t0:i64, t1:i64
  intr t0, time.now
  add  d, d, t0
  intr _, time.sleep_until, d
  intr t1, time.now
  sub  t1, t1, t0
  ret  t1
.end
.func join_timeout(d:i64, child:i64) -> ref
  .local t:ref, v:i64, e:ref, s:ref
  spawn t, sleep, child
  intr _, time.timeout, d
  .try b, x, h, e
b:
  joini v, t
x:
  const s, "joined"
  ret s
h:
  cancel t
  errkind s, e
  ret s
.end
.func outcome_timeout(d:i64, child:i64) -> ref
  .local t:ref, v:i64, e:ref, s:ref
  spawn t, sleep, child
  intr _, time.timeout, d
  .try b, x, h, e
b:
  outcome v, t
x:
  const s, "outcome"
  ret s
h:
  cancel t
  errkind s, e
  ret s
.end
.func event_timeout(d:i64) -> ref
  .local ev:ref, e:ref, s:ref
  evnew ev
  intr _, time.timeout, d
  .try b, x, h, e
b:
  evwait ev
x:
  const s, "signalled"
  ret s
h:
  errmsg s, e
  ret s
.end
.func event_signalled(d:i64) -> ref
  .local ev:ref, s:ref
  evnew ev
  evsignal ev
  intr _, time.timeout, d
  evwait ev                 ; a kept signal: no wait, the timeout is dropped
  evnew ev
  intr _, time.timeout, d
  spawn s, signaller, ev
  evwait ev                 ; signalled before the timeout
  const s, "signalled"
  ret s
.end
.func signaller(ev:ref) -> void
  evsignal ev
  retv
.end
.func ticks(period:i64, policy:i64, n:i64, slow:i64) -> ref
  .local job:ref, i:i64, at:i64, prev:i64, s:ref
  intr job, time.periodic, period, policy
  const i, 0
  const prev, 0
loop:
  jge i, n, done
  intr at, time.tick, job
  jle at, prev, bad          ; nominal instants increase
  movi prev, at
  jeqi slow, 0, next
  intr _, time.sleep, slow   ; a handler slower than the period
next:
  addi i, i, 1
  jmp loop
done:
  intr s, time.job_stats, job
  ret s
bad:
  const s, "instants not increasing"
  ret s
.end
.func tick_other(job:ref) -> i64
  .local at:i64
  intr at, time.tick, job
  ret at
.end
.func steal_job() -> ref
  .local job:ref, p:i64, z:i64, t:ref, v:i64, e:ref, s:ref
  const p, 1000000
  const z, 0
  intr job, time.periodic, p, z
  spawn t, tick_other, job
  .try b, x, h, e
b:
  joini v, t
x:
  const s, "ticked another task's job"
  ret s
h:
  errmsg s, e
  ret s
.end
`

func ms(n int) vmloop.Value { return vmloop.I64(int64(n) * int64(time.Millisecond)) }

// waitTimers waits until engine e has no pending timer: every timer of a
// finished wait is cancelled (possibly remotely, freed by its owner).
func waitTimers(t *testing.T, e *sched.Engine) {
	t.Helper()
	testkit.WaitFor(t, func() bool { return e.PendingTimers() == 0 }, func() string {
		return fmt.Sprintf("engine %q still has %d pending timers", e.Name(), e.PendingTimers())
	})
}

func TestSleep(t *testing.T) {
	testkit.Workers(t, []int{1, 2, 4}, func(t *testing.T, workers int) {
		b, m := timeBus(t, workers, sched.ResourceLimits{})
		p := testkit.Prog(t, b, timeProg)
		for _, fn := range []string{"sleep", "sleep_until"} {
			o := testkit.SpawnAwait(t, m, p, fn, ms(5))
			require.Equal(t, sched.Success, o.Kind, "%s 5ms: %v", fn, o)
			require.GreaterOrEqual(t, o.Value.Int(), int64(5*time.Millisecond), "%s 5ms: %v", fn, o)
		}
		// zero and negative sleeps return at once
		for _, d := range []int64{0, -1} {
			o := testkit.SpawnAwait(t, m, p, "sleep", vmloop.I64(d))
			require.Equal(t, sched.Success, o.Kind, "sleep %d: %v", d, o)
		}
		waitTimers(t, m.Engine())
	})
}

// TestManySleepers: thousands of tasks sleep random short durations on
// every worker; each wakes exactly once, no earlier than asked, and every
// timer is released.
func TestManySleepers(t *testing.T) {
	b, m := timeBus(t, 4, sched.ResourceLimits{})
	p := testkit.Prog(t, b, timeProg)
	const n = 5000
	tasks := make([]*sched.Task, n)
	want := make([]int64, n)
	for i := range tasks {
		want[i] = int64(i%7) * int64(time.Millisecond)
		tasks[i] = testkit.Spawn(t, m, p, "sleep", vmloop.I64(want[i]))
	}
	for i, task := range tasks {
		o := testkit.Await(t, task)
		require.Equal(t, sched.Success, o.Kind, "sleeper %d (%d ns): %v", i, want[i], o)
		require.GreaterOrEqual(t, o.Value.Int(), int64(want[i]), "sleeper %d (%d ns): %v", i, want[i], o)
	}
	waitTimers(t, m.Engine())
}

func TestWaitTimeouts(t *testing.T) {
	b, m := timeBus(t, 2, sched.ResourceLimits{})
	p := testkit.Prog(t, b, timeProg)
	cases := []struct {
		fn   string
		args []vmloop.Value
		want string
	}{
		{"join_timeout", []vmloop.Value{ms(5), ms(10_000)}, vmloop.ErrKindTimeout},
		{"join_timeout", []vmloop.Value{ms(10_000), ms(1)}, "joined"}, // the child wins
		{"join_timeout", []vmloop.Value{vmloop.I64(0), ms(10_000)}, vmloop.ErrKindTimeout},
		{"outcome_timeout", []vmloop.Value{ms(5), ms(10_000)}, vmloop.ErrKindTimeout},
		{"outcome_timeout", []vmloop.Value{ms(10_000), ms(1)}, "outcome"},
		{"event_timeout", []vmloop.Value{ms(5)}, "event.wait: timed out waiting for the event"},
		{"event_signalled", []vmloop.Value{ms(10_000)}, "signalled"},
	}
	for _, c := range cases {
		o := testkit.SpawnAwait(t, m, p, c.fn, c.args...)
		if o.Kind != sched.Success || o.Value.String() != c.want {
			t.Errorf("%s%v: %v, want %q", c.fn, c.args, o, c.want)
		}
	}
	waitTimers(t, m.Engine())
}

// TestCancelSleeping: cancelling a sleeping task completes it Cancelled at
// once and frees its timer.
func TestCancelSleeping(t *testing.T) {
	b, m := timeBus(t, 2, sched.ResourceLimits{})
	p := testkit.Prog(t, b, timeProg)
	var tasks []*sched.Task
	for range 100 {
		task, err := m.Spawn(nil, p, "sleep", ms(60_000))
		require.NoError(t, err)
		tasks = append(tasks, task)
	}
	for b.Scheduler().WaitingTasks() < 100 {
		time.Sleep(time.Millisecond)
	}
	if n := m.Engine().PendingTimers(); n != 100 {
		t.Fatalf("pending timers %d, want 100", n)
	}
	for _, task := range tasks {
		require.NoError(t, m.Cancel(task))
	}
	for _, task := range tasks {
		o := testkit.Await(t, task)
		require.Equal(t, sched.Cancelled, o.Kind, "cancelled sleeper: %v", o)
	}
	waitTimers(t, m.Engine())
}

// TestTimerRaces races timeouts against the events that end the same
// waits (signals from other tasks at about the deadline): every waiter
// ends exactly once, either signalled or timed out, and no timer leaks.
func TestTimerRaces(t *testing.T) {
	b, m := timeBus(t, 4, sched.ResourceLimits{})
	p := testkit.Prog(t, b, `
.abi 1.1
.func waiter(ev:ref, d:i64) -> i64
  .local e:ref, r:i64
  intr _, time.timeout, d
  .try b, x, h, e
b:
  evwait ev
x:
  const r, 1
  ret r
h:
  const r, 2
  ret r
.end
.func signaller(ev:ref, d:i64) -> void
  intr _, time.sleep, d
  evsignal ev
  retv
.end
`)
	const n = 2000
	var wg sync.WaitGroup
	counts := make([]int, 3)
	var mu sync.Mutex
	for i := range n {
		ev := m.NewEvent()
		d := vmloop.I64(int64(i%5) * int64(100*time.Microsecond))
		w, err := m.Spawn(nil, p, "waiter", ev, d)
		require.NoError(t, err)
		_, err = m.Spawn(nil, p, "signaller", ev, d)
		require.NoError(t, err)
		wg.Go(func() {
			o := testkit.Await(t, w)
			mu.Lock()
			defer mu.Unlock()
			if o.Kind != sched.Success {
				t.Errorf("waiter: %v", o)
				return
			}
			counts[o.Value.Int()]++
		})
	}
	wg.Wait()
	if counts[1]+counts[2] != n {
		t.Fatalf("outcomes %v, want %d", counts, n)
	}
	t.Logf("signalled %d, timed out %d", counts[1], counts[2])
	waitTimers(t, m.Engine())
}

func TestPeriodic(t *testing.T) {
	b, m := timeBus(t, 2, sched.ResourceLimits{})
	p := testkit.Prog(t, b, timeProg)
	for _, pol := range []int64{1, 2, 3} {
		// 2 ms period, 10 runs, every handler sleeps 3 ms: each run
		// overruns.
		o := testkit.SpawnAwait(t, m, p, "ticks", ms(2), vmloop.I64(pol), vmloop.I64(10), ms(3))
		s := o.Value.String()
		if o.Kind != sched.Success || !strings.Contains(s, "runs=10 ") || strings.Contains(s, "overruns=0 ") {
			t.Errorf("policy %d: %v", pol, o)
		}
		// a fast handler does not overrun... unless the machine stalls;
		// so only the run count is checked
		o = testkit.SpawnAwait(t, m, p, "ticks", ms(1), vmloop.I64(pol), vmloop.I64(5), vmloop.I64(0))
		if o.Kind != sched.Success || !strings.Contains(o.Value.String(), "runs=5 ") {
			t.Errorf("policy %d fast: %v", pol, o)
		}
	}
	// Only the creating task ticks a job.
	o := testkit.SpawnAwait(t, m, p, "steal_job")
	if o.Kind != sched.Success || !strings.Contains(o.Value.String(), "only the creating task ticks") {
		t.Errorf("tick of another task's job: %v", o)
	}
	// Jobs end with their task.
	if jobs := m.Engine().Jobs(); len(jobs) != 0 {
		t.Errorf("%d jobs outlive their tasks", len(jobs))
	}
	waitTimers(t, m.Engine())
}

// TestPeriodicMetrics reads a running job's metrics through the
// scheduler's snapshot, per job and per engine.
func TestPeriodicMetrics(t *testing.T) {
	b, m := timeBus(t, 2, sched.ResourceLimits{})
	p := testkit.Prog(t, b, timeProg)
	task, err := m.Spawn(nil, p, "ticks", ms(1), vmloop.I64(0), vmloop.I64(100_000), vmloop.I64(0))
	require.NoError(t, err)
	var pm *sched.PeriodicMetrics
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, em := range b.Scheduler().Metrics().Engines {
			if em.Name == "t" {
				pm = em.Periodic
			}
		}
		if pm != nil && len(pm.PerJob) == 1 && pm.PerJob[0].Runs >= 5 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	m.Cancel(task)
	testkit.Await(t, task)
	if pm == nil || pm.Jobs != 1 || len(pm.PerJob) != 1 || pm.TargetRate != 1000 || pm.ActualRate <= 0 || pm.PerJob[0].Policy != "drift" {
		t.Fatalf("periodic metrics %+v", pm)
	}
	// metricsConfig off: no periodic metrics
	cfg := m.Engine().Config()
	cfg.Metrics.Periodic = sched.MetricsOff
	require.NoError(t, m.UpdateConfig(nil, cfg))
	for _, em := range b.Scheduler().Metrics().Engines {
		if em.Name == "t" && em.Periodic != nil {
			t.Fatalf("metrics off but reported: %+v", em.Periodic)
		}
	}
}

// TestTimerLimit: the engine's pendingTimers limit throws a catchable
// ResourceError to the task that asks for one more, and nothing else.
func TestTimerLimit(t *testing.T) {
	b, m := timeBus(t, 2, sched.ResourceLimits{PendingTimers: 3})
	p := testkit.Prog(t, b, timeProg)
	var tasks []*sched.Task
	for range 3 {
		task, err := m.Spawn(nil, p, "sleep", ms(60_000))
		require.NoError(t, err)
		tasks = append(tasks, task)
	}
	// A sleeper arms its timer before it is parked: wait for both.
	parked := func() bool {
		for _, task := range tasks {
			if task.State() != sched.Waiting {
				return false
			}
		}
		return m.Engine().PendingTimers() == 3
	}
	for !parked() {
		time.Sleep(time.Millisecond)
	}
	o := testkit.SpawnAwait(t, m, p, "sleep", ms(1))
	if o.Kind != sched.Failure || o.Value.ErrKind() != vmloop.ErrKindResource || !strings.Contains(o.Value.Message(), "pendingTimers 3") {
		t.Fatalf("over the limit: %v", o)
	}
	// a timeout beyond the limit is refused (caught here) before the wait
	// starts
	o = testkit.SpawnAwait(t, m, p, "event_timeout", ms(1))
	if o.Kind != sched.Success || !strings.Contains(o.Value.String(), "pendingTimers 3") {
		t.Fatalf("timeout over the limit: %v", o)
	}
	for _, task := range tasks {
		require.Equal(t, sched.Waiting, task.State(), "a sleeper was disturbed: %v", task.State())
		m.Cancel(task)
		testkit.Await(t, task)
	}
	waitTimers(t, m.Engine())
	o = testkit.SpawnAwait(t, m, p, "sleep", ms(1))
	require.Equal(t, sched.Success, o.Kind, "after the limit freed: %v", o)
}

// TestNoWheel: an engine without a timer wheel refuses every timer with
// an error naming the engine; adding a wheel at run time makes timers
// work; a wheel once set cannot change.
func TestNoWheel(t *testing.T) {
	b := testkit.Bus(t, bus.Config{}, nil)
	m, err := b.RegisterEngine("events", sched.EngineRuntimeConfig{}, bus.CapAll)
	require.NoError(t, err)
	p := testkit.Prog(t, b, timeProg)
	for _, c := range []struct {
		fn   string
		args []vmloop.Value
	}{{"sleep", []vmloop.Value{ms(1)}}, {"event_timeout", []vmloop.Value{ms(1)}}, {"ticks", []vmloop.Value{ms(1), vmloop.I64(0), vmloop.I64(1), vmloop.I64(0)}}} {
		o := testkit.SpawnAwait(t, m, p, c.fn, c.args...)
		if o.Kind != sched.Failure || !strings.Contains(o.Value.Message(), `engine "events"`) || !strings.Contains(o.Value.Message(), "no timer wheel") {
			t.Errorf("%s on an engine without a wheel: %v", c.fn, o)
		}
	}
	w := timerwheel.DefaultConfig()
	require.NoError(t, m.UpdateConfig(nil, sched.EngineRuntimeConfig{TimerWheel: &w}))
	o := testkit.SpawnAwait(t, m, p, "sleep", ms(1))
	require.Equal(t, sched.Success, o.Kind, "after adding a wheel: %v", o)
	w.Tick = 2 * time.Millisecond
	if err := m.UpdateConfig(nil, sched.EngineRuntimeConfig{TimerWheel: &w}); err == nil {
		t.Fatal("changing a wheel was accepted")
	}
	if err := m.UpdateConfig(nil, sched.EngineRuntimeConfig{ReductionLimit: 500}); err != nil || m.Engine().Config().TimerWheel == nil {
		t.Fatalf("an update without a wheel dropped it: %v", err)
	}
}

// TestLongSleepFewWakeups: a 300 ms sleep on an otherwise idle runtime
// costs its worker about one wake-up (it parks until exactly the deadline;
// no ticker), not one per wheel tick (S-4).
func TestLongSleepFewWakeups(t *testing.T) {
	b, m := timeBus(t, 1, sched.ResourceLimits{})
	p := testkit.Prog(t, b, timeProg)
	s := b.Scheduler()
	task, err := m.Spawn(nil, p, "sleep", ms(300))
	require.NoError(t, err)
	for s.WaitingTasks() != 1 {
		time.Sleep(time.Millisecond)
	}
	parks0 := s.Parks()
	o := testkit.Await(t, task)
	require.Equal(t, sched.Success, o.Kind, "sleep: %v", o)
	require.GreaterOrEqual(t, o.Value.Int(), int64(300*time.Millisecond), "sleep: %v", o)
	// One park until the deadline, one after the task ends; allow a few
	// spurious returns (signals) but nothing like 300 ticks.
	if n := s.Parks() - parks0; n > 5 {
		t.Fatalf("%d parks during a 300 ms sleep", n)
	}
}
