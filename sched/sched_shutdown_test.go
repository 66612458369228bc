package sched_test

import (
	"context"
	"fmt"
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
// reads every worker's end count before every list's add count, and a
// child is added before its spawner ends, so a spawner's end it sees
// comes with its child's add.
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
		// Each round's three spawning goroutines hold both CPUs while
		// Shutdown runs (about 0.5 s a round under the detector); the
		// race run wants the hand-offs raced, unit wants the rounds.
		iters = 24
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
