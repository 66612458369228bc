package sched_test

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// TestExactlyOnce spawns many tasks that yield once; every one completes
// exactly once with its own value (the sum proves no loss or duplicate).
func TestExactlyOnce(t *testing.T) {
	testkit.Workers(t, []int{1, 2, 4, 8}, func(t *testing.T, workers int) {
		rt := testkit.Runtime(t, jade.Options{Workers: workers})
		p := testkit.Load(t, rt, testkit.Fanout)
		n := int64(100_000)
		if testing.Short() || (raceEnabled && workers != 2) {
			n = 10_000
		}
		if h, err := strconv.ParseInt(os.Getenv("JADE_HAMMER"), 10, 64); err == nil && h > 0 {
			n = h // make hammer: 1M tasks per worker count
		}
		// Tasks are not goroutines: the count stays flat while they run.
		before := runtime.NumGoroutine()
		var peak atomic.Int64
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			for {
				if g := int64(runtime.NumGoroutine()); g > peak.Load() {
					peak.Store(g)
				}
				select {
				case <-stop:
					return
				case <-time.After(time.Millisecond):
				}
			}
		}()
		o := testkit.RunFanout(t, rt, p, n)
		close(stop)
		<-sampled
		if g := peak.Load(); g > int64(before)+3 {
			t.Fatalf("workers=%d: %d goroutines while running (%d before)", workers, g, before)
		}
		require.Equal(t, sched.Success, o.Kind, "workers=%d: %v, want Success(%d)", workers, o, n*(n-1)/2)
		require.Equal(t, int64(n*(n-1)/2), o.Value.Int(), "workers=%d: %v, want Success(%d)", workers, o, n*(n-1)/2)
		// main's outcome is published before its worker decrements the
		// live count: wait for the count, do not sample it.
		testkit.WaitFor(t, func() bool { return hostbus.Scheduler(rt).LiveTasks() == 0 })
	})
}

// TestTasksAreNotGoroutines keeps 100k tasks parked and checks that the
// goroutine count stays at workers + a fixed few.
func TestTasksAreNotGoroutines(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 2})
	p := testkit.Load(t, rt, `
.func main(n:i64, gate:ref) -> i64
  .local i:i64, t:ref
  const i, 0
l:
  jge   i, n, d
  spawn t, sleeper, gate
  addi  i, i, 1
  jmp   l
d:
  ret   i
.end
.func sleeper(gate:ref) -> i64
  .local z:i64
  evwait gate
  const z, 1
  ret z
.end`)
	before := runtime.NumGoroutine()
	gate := rt.NewEvent()
	n := int64(100_000)
	if raceEnabled {
		n = 20_000
	}
	testkit.Run(t, rt, p, "main", vmloop.I64(n), gate)
	testkit.WaitFor(t, func() bool { return hostbus.Scheduler(rt).WaitingTasks() == n })
	if g := runtime.NumGoroutine(); g > before+2 {
		t.Fatalf("%d goroutines with %d parked tasks (was %d before)", g, n, before)
	}
	require.NoError(t, rt.Broadcast(gate))
	testkit.WaitFor(t, func() bool { return hostbus.Scheduler(rt).LiveTasks() == 0 })
}

// TestHogDoesNotStarve: an endless loop and a counting task share one
// worker; preemption lets the counter finish (S-6), then main cancels the
// hog, whose outcome is Cancelled (S-13).
func TestHogDoesNotStarve(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1, ReductionLimit: 1000})
	p := testkit.Load(t, rt, `
.func main() -> i64
  .local h:ref, c:ref, n:i64, k:i64, o:i64
  spawn h, hog
  const n, 200000
  spawn c, count, n
  joini k, c
  cancel h
  outcome o, h
  jnei  o, 3, bad
  ret   k
bad:
  const k, -1
  ret   k
.end
.func hog() -> i64
  .local x:i64
  const x, 0
l:
  addi x, x, 1
  jmp  l
.end
.func count(n:i64) -> i64
  .local i:i64
  const i, 0
l:
  jge  i, n, d
  addi i, i, 1
  jmp  l
d:
  ret  i
.end`)
	o := testkit.Run(t, rt, p, "main")
	require.Equal(t, sched.Success, o.Kind, "got %v", o)
	require.Equal(t, int64(200000), o.Value.Int(), "got %v", o)
}

// TestOutcomes covers S-11, S-12 and S-13: Completed is a state, the
// outcome a separate dimension; a throw becomes Failure at the task
// boundary and is re-thrown in the joiner; cancellation is neither.
func TestOutcomes(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{})
	p := testkit.Load(t, rt, `
.func main() -> i64
  .local z:i64
  const z, 7
  ret z
.end
.func thrower() -> i64
  .local m:ref, e:ref
  const m, "boom"
  newerr e, m
  throw e
.end
.func trapper() -> i64
  .local a:i64, b:i64
  const a, 1
  const b, 0
  div a, a, b
  ret a
.end
.func waiter(ev:ref) -> i64
  .local z:i64
  evwait ev
  const z, 0
  ret z
.end
.func catcher() -> ref
  .local t:ref, v:i64, e:ref, s:ref
  spawn t, thrower
  .try b, en, h, e
b:
  joini v, t
en:
  const s, "no throw"
  ret s
h:
  errmsg s, e
  ret s
.end`)
	cases := []struct {
		fn   string
		want sched.OutcomeKind
		val  string
	}{
		{"main", sched.Success, "7"},
		{"thrower", sched.Failure, "Error: boom"},
		{"trapper", sched.Trapped, ""},
		{"catcher", sched.Success, "boom"},
	}
	for _, c := range cases {
		task, err := rt.Spawn(p, c.fn)
		require.NoError(t, err)
		o, err := task.Wait(context.Background())
		require.NoError(t, err)
		require.Equal(t, sched.Completed, hostbus.Task(task).State(), "%s: state %s after Wait", c.fn, hostbus.Task(task).State())
		if o.Kind != c.want || (c.val != "" && o.Value.String() != c.val) {
			t.Fatalf("%s: outcome %v, want %s(%s)", c.fn, o, c.want, c.val)
		}
		if c.want == sched.Trapped && o.Trap.Code != vmloop.TrapDivZero {
			t.Fatalf("%s: trap %v", c.fn, o.Trap)
		}
	}
	// Cancellation of a waiting task: Cancelled, not Failure or Trap.
	ev := rt.NewEvent()
	task, err := rt.Spawn(p, "waiter", ev)
	require.NoError(t, err)
	testkit.WaitFor(t, func() bool { return hostbus.Task(task).State() == sched.Waiting })
	require.NoError(t, task.Cancel())
	o, _ := task.Wait(context.Background())
	require.Equal(t, sched.Cancelled, o.Kind, "cancelled waiter: %v", o)
	require.True(t, hostbus.Task(task).CancelRequested(), "cancel flag not sticky")
}

// TestEventSemantics: a signal before the wait is kept (once); broadcast
// wakes all and keeps nothing.
func TestEventSemantics(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{})
	p := testkit.Load(t, rt, `
.func main(ev:ref) -> i64
  .local z:i64
  evwait ev
  const z, 1
  ret z
.end`)
	ev := rt.NewEvent()
	require.NoError(t, rt.Signal(ev))
	o := testkit.Run(t, rt, p, "main", ev)
	require.Equal(t, sched.Success, o.Kind, "kept signal: %v", o)
	// The kept signal was consumed: the next waiter parks.
	task, _ := rt.Spawn(p, "main", ev)
	testkit.WaitFor(t, func() bool { return hostbus.Task(task).State() == sched.Waiting })
	task2, _ := rt.Spawn(p, "main", ev)
	testkit.WaitFor(t, func() bool { return hostbus.Scheduler(rt).WaitingTasks() == 2 })
	rt.Broadcast(ev)
	for _, tk := range []*jade.Task{task, task2} {
		o, _ := tk.Wait(context.Background())
		require.Equal(t, sched.Success, o.Kind, "broadcast: %v", o)
	}
	// Broadcast kept nothing: a new waiter parks.
	task3, _ := rt.Spawn(p, "main", ev)
	testkit.WaitFor(t, func() bool { return hostbus.Task(task3).State() == sched.Waiting })
	task3.Cancel()
	task3.Wait(context.Background())
}

// TestLostWakeups hammers signal/wait pairs across workers with cancels
// mixed in: every round trip completes (no wake is lost), and every task
// completes exactly once.
func TestLostWakeups(t *testing.T) {
	testkit.Workers(t, []int{1, 2, 4, 8}, func(t *testing.T, workers int) {
		rt := testkit.Runtime(t, jade.Options{Workers: workers, ReductionLimit: 200})
		p := testkit.Load(t, rt, `
.func main(pairs:i64, rounds:i64) -> i64
  .local i:i64, ts:ref, t:ref, a:ref, b:ref, sum:i64, v:i64, n2:i64
  muli  n2, pairs, 2
  anew  ts, n2, ref
  const i, 0
sp:
  jge   i, pairs, js
  evnew a
  evnew b
  spawn t, pinger, a, b, rounds
  muli  v, i, 2
  asetr ts, v, t
  spawn t, ponger, a, b, rounds
  addi  v, v, 1
  asetr ts, v, t
  addi  i, i, 1
  jmp   sp
js:
  const i, 0
  const sum, 0
jl:
  jge   i, n2, done
  agetr t, ts, i
  joini v, t
  add   sum, sum, v
  addi  i, i, 1
  jmp   jl
done:
  ret   sum
.end
.func pinger(a:ref, b:ref, n:i64) -> i64
  .local i:i64
  const i, 0
l:
  jge i, n, d
  evsignal a
  evwait b
  addi i, i, 1
  jmp l
d:
  ret i
.end
.func ponger(a:ref, b:ref, n:i64) -> i64
  .local i:i64
  const i, 0
l:
  jge i, n, d
  evwait a
  evsignal b
  addi i, i, 1
  jmp l
d:
  ret i
.end`)
		pairs, rounds := int64(200), int64(500)
		if raceEnabled && workers != 2 {
			rounds = 100
		}
		o := testkit.Run(t, rt, p, "main", vmloop.I64(pairs), vmloop.I64(rounds))
		require.Equal(t, sched.Success, o.Kind, "workers=%d: %v want %d", workers, o, 2*pairs*rounds)
		require.Equal(t, int64(2*pairs*rounds), o.Value.Int(), "workers=%d: %v want %d", workers, o, 2*pairs*rounds)
	})
}

// TestCancelRaces cancels tasks while they run, wait and get woken; every
// task completes exactly once with Success or Cancelled.
func TestCancelRaces(t *testing.T) {
	testkit.Workers(t, []int{1, 2, 4, 8}, testCancelRaces)
}

func testCancelRaces(t *testing.T, workers int) {
	rt := testkit.Runtime(t, jade.Options{Workers: workers, ReductionLimit: 100})
	p := testkit.Load(t, rt, `
.func main(ev:ref, n:i64) -> i64
  .local i:i64
  const i, 0
l:
  jge i, n, d
  evwait ev
  evsignal ev
  addi i, i, 1
  jmp l
d:
  ret i
.end`)
	ev := rt.NewEvent()
	var tasks []*jade.Task
	for i := 0; i < 2000; i++ {
		tk, err := rt.Spawn(p, "main", ev, vmloop.I64(50))
		require.NoError(t, err)
		tasks = append(tasks, tk)
	}
	rt.Signal(ev)
	var wg sync.WaitGroup
	for i := 0; i < len(tasks); i += 3 {
		wg.Add(1)
		go func(tk *jade.Task) { defer wg.Done(); tk.Cancel() }(tasks[i])
	}
	wg.Wait()
	// Keep the chain alive: a task cancelled between its evwait and its
	// evsignal took the token with it (a waiter cancelled before it resumed
	// passes it on).
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
				rt.Signal(ev)
			}
		}
	}()
	var ok, cancelled int
	for _, tk := range tasks {
		o, err := tk.Wait(context.Background())
		require.NoError(t, err)
		switch o.Kind {
		case sched.Success:
			ok++
		case sched.Cancelled:
			cancelled++
		default:
			t.Fatalf("task %d: %v", tk.ID(), o)
		}
	}
	close(stop)
	if ok+cancelled != len(tasks) || cancelled == 0 {
		t.Fatalf("ok %d cancelled %d of %d", ok, cancelled, len(tasks))
	}
}

// TestPrint checks io.print_* output reaches the configured writer.
func TestPrint(t *testing.T) {
	var buf bytes.Buffer
	rt := testkit.Runtime(t, jade.Options{Stdout: &buf})
	p := testkit.Load(t, rt, `
.func main() -> i64
  .local z:i64, s:ref, f:f64
  const z, 42
  intr _, io.print_i64, z
  const s, "hi"
  intr _, io.print_str, s
  const f, 1.5
  intr _, io.print_f64, f
  ret z
.end`)
	testkit.Run(t, rt, p, "main")
	require.Equal(t, "42\nhi\n1.5\n", buf.String(), "output %q", buf.String())
}
