package sched_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"go.uber.org/goleak"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/bus"
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

// TestForcedShutdownReportsStuck: a host intrinsic that blocks its worker
// (breaking the contract) is reported at the deadline with function@pc and
// abandoned; nothing is torn down under it.
func TestForcedShutdownReportsStuck(t *testing.T) {
	rt, err := jade.New(jade.Options{})
	require.NoError(t, err)
	release := make(chan struct{})
	var entered atomic.Bool
	rt.RegisterIntrinsic("test.block", nil, vmloop.TVoid, 0, func(c *bus.Call) (vmloop.Value, error) {
		entered.Store(true)
		<-release
		return vmloop.Void(), nil
	})
	p := testkit.Load(t, rt, `
.func main() -> i64
  .local z:i64
  intr _, test.block
  const z, 0
  ret z
.end`)
	task, _ := rt.Spawn(p, "main")
	testkit.WaitFor(t, entered.Load)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err = rt.Shutdown(ctx)
	require.ErrorContains(t, err, "TestForcedShutdownReportsStuck.jasm:4 (main)", "shutdown error %v, want a report naming the file:line of the call", err)
	close(release)
	o, _ := task.Wait(context.Background())
	require.Equal(t, sched.Cancelled, o.Kind, "released task: %v", o)
}

// TestNoLeakAfterShutdown: no goroutine of ours survives Close.
func TestNoLeakAfterShutdown(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rt, err := jade.New(jade.Options{Workers: 3})
	require.NoError(t, err)
	p, err := rt.Load("x.jasm", []byte(testkit.Fanout))
	require.NoError(t, err)
	o, _ := rt.Run(context.Background(), p, "fanout", vmloop.I64(1000))
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.NoError(t, rt.Close(context.Background()))
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

// loadChain registers test.ended (calling ended) on rt and loads link(n):
// a chain in which each link spawns the next and ends, the last calling
// test.ended; more is appended to the program.
func loadChain(t *testing.T, rt *jade.Runtime, ended func(), more string) *vmloop.Program {
	t.Helper()
	err := rt.RegisterIntrinsic("test.ended", nil, vmloop.TVoid, 0, func(*bus.Call) (vmloop.Value, error) {
		ended()
		return vmloop.Void(), nil
	})
	require.NoError(t, err)
	return testkit.Load(t, rt, `
.func link(n:i64) -> i64
  .local t:ref, m:i64
  jgti  n, 0, more
  intr  _, test.ended
  ret   n
more:
  subi  m, n, 1
  spawn t, link, m
  ret   n
.end`+more)
}

// TestDrainWaitsForEveryTask: Drain returns only once every task has
// completed — here chains in which each link spawns the next and ends, so
// that the live count passes through many spawns and completions on both
// workers while several goroutines wait in Drain — and at once on an idle
// runtime; a Drain whose context ends first reports the live tasks, and
// the next one still returns when the last task ends.
func TestDrainWaitsForEveryTask(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 2})
	var ended atomic.Int64
	p := loadChain(t, rt, func() { ended.Add(1) }, `
.func wait(ev:ref) -> i64
  .local z:i64
  evwait ev
  const  z, 0
  ret    z
.end`)
	drain := func(d time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		return hostbus.Bus(rt).Drain(ctx)
	}
	require.NoError(t, drain(time.Minute), "drain of an idle runtime")
	const chains, links = 8, 2000
	rounds := 20
	if raceEnabled {
		rounds = 5 // ~1 s a round under the race detector
	}
	for round := range rounds {
		ended.Store(0)
		for range chains {
			_, err := rt.Spawn(p, "link", vmloop.I64(links))
			require.NoError(t, err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 3)
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := drain(time.Minute); err != nil {
					errs <- err
					return
				}
				if n := ended.Load(); n != chains {
					errs <- fmt.Errorf("round %d: Drain returned after %d of %d chains ended", round, n, chains)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.Zero(t, hostbus.Scheduler(rt).LiveTasks(), "round %d: tasks live after Drain", round)
	}
	ev := rt.NewEvent()
	_, err := rt.Spawn(p, "wait", ev)
	require.NoError(t, err)
	require.ErrorContains(t, drain(20*time.Millisecond), "1 tasks still live", "drain with a waiting task")
	require.False(t, hostbus.Scheduler(rt).Draining(), "a timed-out Drain left completions looking for the last task")
	done := make(chan error, 1)
	go func() { done <- drain(time.Minute) }()
	time.Sleep(10 * time.Millisecond)
	require.NoError(t, rt.Signal(ev))
	require.NoError(t, <-done, "drain after the last task ended")
}

// TestLiveTasksNeverZeroWhileChainLive: while a chain of tasks (each link
// spawns the next and ends) is live, LiveTasks never reads 0 — the count
// is taken with every registry shard locked, so a child registered in one
// shard and its spawner leaving another are seen together or not at all.
func TestLiveTasksNeverZeroWhileChainLive(t *testing.T) {
	testkit.Workers(t, []int{1, 2}, func(t *testing.T, workers int) {
		rt := testkit.Runtime(t, jade.Options{Workers: workers})
		var ended atomic.Bool
		p := loadChain(t, rt, func() { ended.Store(true) }, "")
		s := hostbus.Scheduler(rt)
		zeros := 0
		links := int64(100_000)
		if raceEnabled {
			links = 20_000
		}
		for range 2 {
			ended.Store(false)
			_, err := rt.Spawn(p, "link", vmloop.I64(links))
			require.NoError(t, err)
			for !ended.Load() {
				if s.LiveTasks() == 0 && !ended.Load() {
					zeros++
				}
			}
			testkit.WaitFor(t, func() bool { return s.LiveTasks() == 0 })
		}
		if zeros > 0 {
			t.Errorf("workers=%d: LiveTasks() read 0 %d times while a chain was live", workers, zeros)
		}
	})
}

// TestShutdownCancelsLateLaunches: Shutdown (refuse spawns, cancel every
// registered task, drain) while the host keeps spawning, chains spawn
// and end, other goroutines Drain, and host-suspended tasks complete late
// or never: a spawn that passed the stopping check before Shutdown but
// registers after its cancel pass went by is cancelled at Launch, so no
// task is left waiting forever and Shutdown returns in time.
func TestShutdownCancelsLateLaunches(t *testing.T) {
	for iter := range 30 {
		rt, err := jade.New(jade.Options{Workers: 1 + iter%3})
		require.NoError(t, err)
		require.NoError(t, rt.RegisterIntrinsic("test.hold", []vmloop.Type{vmloop.TI64}, vmloop.TI64, 0, func(c *bus.Call) (vmloop.Value, error) {
			x := c.Args()[0]
			done := c.Suspend()
			if x.Int()%3 != 0 { // every third never completes
				time.AfterFunc(time.Duration(x.Int()%7)*50*time.Microsecond, func() { done.Complete(x) })
			}
			return vmloop.Void(), nil
		}))
		p := testkit.Load(t, rt, `
.func main(n:i64) -> i64
  .local i:i64, c:ref
  const i, 0
l:
  jge   i, n, d
  spawn c, link, i
  free  c
  spawn c, hostchild, i
  free  c
  addi  i, i, 1
  jmp   l
d:
  ret   i
.end
.func link(n:i64) -> i64
  .local t:ref, m:i64
  jgti  n, 0, more
  ret   n
more:
  subi  m, n, 1
  spawn t, link, m
  ret   n
.end
.func hostchild(x:i64) -> i64
  .local v:i64
  intr  v, test.hold, x
  ret   v
.end`)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, _ = rt.Spawn(p, "main", vmloop.I64(50)) // refused once stopping
				time.Sleep(20 * time.Microsecond)
			}
		}()
		time.Sleep(5 * time.Millisecond)
		drained := make(chan error, 4)
		for range 4 {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				drained <- hostbus.Bus(rt).Drain(ctx)
			}()
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err = rt.Shutdown(ctx)
		cancel()
		close(stop)
		wg.Wait()
		require.NoError(t, err, "iter %d", iter)
		for range 4 {
			require.NoError(t, <-drained, "iter %d: drain", iter)
		}
		require.Zero(t, hostbus.Scheduler(rt).LiveTasks(), "iter %d: live after shutdown", iter)
	}
}

// TestHostSpawnRacingShutdownEnds: every host spawn that Shutdown did not
// refuse ends (Cancelled or Success), even when it passed the stopping
// check just before Shutdown and registered just after Shutdown's drain
// had seen no task: Shutdown waits for such spawns to register before it
// cancels and drains. Before that, one could be launched onto stopped
// workers and stay live for ever (a Drain then never returned).
func TestHostSpawnRacingShutdownEnds(t *testing.T) {
	iters := 200
	if raceEnabled {
		iters = 60
	}
	for iter := range iters {
		rt, err := jade.New(jade.Options{Workers: 1 + iter%2})
		require.NoError(t, err)
		p := testkit.Load(t, rt, ".func main() -> i64\n  .local r:i64\n  const r, 1\n  ret r\n.end\n")
		var mu sync.Mutex
		var spawned []*jade.Task
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					if jt, err := rt.Spawn(p, "main"); err == nil {
						mu.Lock()
						spawned = append(spawned, jt)
						mu.Unlock()
					}
				}
			}()
		}
		time.Sleep(time.Duration(iter%5) * 100 * time.Microsecond)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err = rt.Shutdown(ctx)
		cancel()
		close(stop)
		wg.Wait()
		require.NoError(t, err, "iter %d: shutdown", iter)
		for _, jt := range spawned {
			select {
			case <-hostbus.Task(jt).Done():
			case <-time.After(10 * time.Second):
				t.Fatalf("iter %d: a spawn accepted around Shutdown never ended (%d live)", iter, hostbus.Scheduler(rt).LiveTasks())
			}
		}
	}
}
