package sched_test

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// TestStealFromBusyWorker: main spawns children onto its worker's local
// queue and then hogs that worker for whole (long) slices; the other
// worker steals the children and runs them while main still runs.
func TestStealFromBusyWorker(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 2, ReductionLimit: sched.MaxReductionLimit})
	p := testkit.Load(t, rt, `
.func main(n:i64) -> i64
  .local i:i64, t:ref, x:i64
  const i, 0
sp:
  jge   i, n, hog
  spawn t, child, i
  addi  i, i, 1
  jmp   sp
hog:
  const x, 0
l:
  addi  x, x, 1
  jmp   l
.end
.func child(x:i64) -> i64
  .local i:i64
  const i, 0
l:
  jgei i, 1000, d
  addi i, i, 1
  jmp  l
d:
  ret  x
.end`)
	s := hostbus.Scheduler(rt)
	main, err := rt.Spawn(p, "main", vmloop.I64(100))
	require.NoError(t, err)
	t.Cleanup(func() { main.Cancel() })
	// Every child ran (one slice each, after main's first) and completed.
	testkit.WaitFor(t, func() bool { return s.Dispatches() >= 101 && s.LiveTasks() == 1 })
	require.NotZero(t, s.Steals(), "children completed without any steal")
	require.NotEqual(t, sched.Completed, hostbus.Task(main).State(), "hog state")
	main.Cancel()
	o, _ := main.Wait(context.Background())
	require.Equal(t, sched.Cancelled, o.Kind, "hog: %v", o)
}

// TestIdleWorkersPark: once the work is done, every worker is parked and
// the dispatch and park counters stand still (no heartbeat, S-4).
func TestIdleWorkersPark(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 4})
	p := testkit.Load(t, rt, testkit.Fanout)
	o := testkit.RunFanout(t, rt, p, 2000)
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	s := hostbus.Scheduler(rt)
	// A worker counts itself idle before it counts its park (sleep): the
	// counters are read once they have stood still for a moment, or a
	// worker descheduled between the two (under -race, on a loaded
	// machine) would count its park inside the window below.
	var d, pk uint64
	testkit.WaitFor(t, func() bool {
		d, pk = s.Dispatches(), s.Parks()
		time.Sleep(20 * time.Millisecond)
		return s.IdleWorkers() == 4 && s.Dispatches() == d && s.Parks() == pk
	})
	time.Sleep(200 * time.Millisecond)
	if d2, pk2 := s.Dispatches(), s.Parks(); d2 != d || pk2 != pk || s.IdleWorkers() != 4 {
		t.Fatalf("idle runtime moved: dispatches %d→%d, parks %d→%d, idle %d", d, d2, pk, pk2, s.IdleWorkers())
	}
	// Parked workers are woken by new work.
	o = testkit.RunFanout(t, rt, p, 100)
	require.Equal(t, sched.Success, o.Kind, "%v", o)
}

// TestGCWhileIdle: parked workers sit in a blocking syscall the runtime
// knows about, so a stop-the-world GC completes.
func TestGCWhileIdle(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 4})
	p := testkit.Load(t, rt, testkit.Fanout)
	testkit.RunFanout(t, rt, p, 100)
	s := hostbus.Scheduler(rt)
	testkit.WaitFor(t, func() bool { return s.IdleWorkers() == 4 })
	done := make(chan struct{})
	go func() {
		runtime.GC()
		runtime.GC()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("GC did not complete while the runtime was idle")
	}
}

// TestDefaultWorkers: Workers 0 means $JADE_WORKERS, or GOMAXPROCS − 1 (at
// least 1) without it; a bad JADE_WORKERS is an error naming the variable;
// Start raises GOMAXPROCS to workers + 1, saying so, and Close restores it.
func TestDefaultWorkers(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	t.Setenv(sched.WorkersEnv, "")
	require.Equal(t, max(1, procs-1), sched.DefaultWorkers(), "DefaultWorkers without JADE_WORKERS")
	t.Setenv(sched.WorkersEnv, "3")
	require.Equal(t, 3, sched.DefaultWorkers(), "DefaultWorkers with JADE_WORKERS=3")
	rt3, err := jade.New(jade.Options{})
	require.NoError(t, err)
	if n := hostbus.Scheduler(rt3).Workers(); n != 3 {
		t.Errorf("%d workers with JADE_WORKERS=3", n)
	}
	require.NoError(t, rt3.Close(context.Background()))
	for _, bad := range []string{"0", "-1", "x", "1025"} {
		t.Setenv(sched.WorkersEnv, bad)
		if _, err := jade.New(jade.Options{}); err == nil || !strings.Contains(err.Error(), "JADE_WORKERS") {
			t.Errorf("JADE_WORKERS=%s: error %v, want one naming the variable", bad, err)
		}
		if rt, err := jade.New(jade.Options{Workers: 2}); err != nil {
			t.Errorf("JADE_WORKERS=%s with Workers 2: %v (an explicit count wins)", bad, err)
		} else {
			rt.Close(context.Background())
		}
	}
	t.Setenv(sched.WorkersEnv, "")
	rt, err := jade.New(jade.Options{Workers: procs + 2})
	require.NoError(t, err)
	require.Equal(t, procs+3, runtime.GOMAXPROCS(0), "GOMAXPROCS with %d workers", procs+2)
	require.NotEmpty(t, hostbus.Scheduler(rt).Note(), "no note about the raised GOMAXPROCS")
	require.NoError(t, rt.Close(context.Background()))
	require.Equal(t, procs, runtime.GOMAXPROCS(0), "GOMAXPROCS after close")
}

// marks registers test.mark(i64): each call appends its argument and the
// scheduler's dispatch count at that moment.
type marks struct {
	mu  sync.Mutex
	arg []int64
	at  []uint64
}

func addMarks(t *testing.T, rt *jade.Runtime) *marks {
	m := &marks{}
	s := hostbus.Scheduler(rt)
	err := rt.RegisterIntrinsic("test.mark", []vmloop.Type{vmloop.TI64}, vmloop.TVoid, 0, func(c *bus.Call) (vmloop.Value, error) {
		m.mu.Lock()
		m.arg = append(m.arg, c.Args()[0].Int())
		m.at = append(m.at, s.Dispatches())
		m.mu.Unlock()
		return vmloop.Void(), nil
	})
	require.NoError(t, err)
	return m
}

// TestLIFOChainSharesSlice: two tasks that wake each other run through the
// lifo slot on the rest of one slice; a task queued behind them on the same
// worker still runs (S-6) and completes while the pair keeps ping-ponging,
// and between two of its slices the pair runs about one slice's worth of
// picks from the slot (each costs limit/64 reductions), not thousands.
func TestLIFOChainSharesSlice(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1, ReductionLimit: 2000})
	m := addMarks(t, rt)
	p := testkit.Load(t, rt, `
.func main(n:i64) -> i64
  .local a:ref, b:ref, p1:ref, p2:ref, c:ref, k:i64
  evnew a
  evnew b
  spawn p1, ping, a, b
  spawn p2, ping, b, a
  spawn c, yielder, n
  evsignal a
  joini k, c
  cancel p1
  cancel p2
  ret   k
.end
.func ping(me:ref, other:ref) -> i64
l:
  evwait   me
  evsignal other
  jmp      l
.end
.func yielder(n:i64) -> i64
  .local i:i64
  const i, 0
l:
  jge   i, n, d
  intr  _, test.mark, i
  yield
  addi  i, i, 1
  jmp   l
d:
  ret   i
.end`)
	o := testkit.Run(t, rt, p, "main", vmloop.I64(50))
	require.Equal(t, sched.Success, o.Kind, "got %v", o)
	require.Equal(t, int64(50), o.Value.Int(), "got %v", o)
	m.mu.Lock()
	defer m.mu.Unlock()
	require.Len(t, m.at, 50, "%d marks", len(m.at))
	total, most := m.at[49]-m.at[0], uint64(0)
	for i := 1; i < len(m.at); i++ {
		most = max(most, m.at[i]-m.at[i-1])
	}
	// The pair really ran as a chain meanwhile, and gave way after at
	// most about one slice of picks (64, plus the queue's own turns).
	if total < 500 {
		t.Fatalf("%d dispatches over 49 yields: the ping-pong pair did not run", total)
	}
	if most > 3*64 {
		t.Fatalf("the yielder waited %d dispatches between two of its slices (at most about 64 expected)", most)
	}
}

// TestFanOutYieldsToChildren: a spawn costs its spawner a share of the
// slice (spawnCost), so a task spawning many children on one worker is
// preempted after about 64 spawns and the children queued so far run
// before it spawns the rest, instead of all of them waiting for its loop
// to end (a few reductions per spawn would let one slice spawn
// thousands).
func TestFanOutYieldsToChildren(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	m := addMarks(t, rt)
	p := testkit.Load(t, rt, `
.func main(n:i64) -> i64
  .local i:i64, c:ref, neg:i64
  const i, 0
l:
  jge   i, n, d
  spawn c, child, i
  free  c
  addi  i, i, 1
  jmp   l
d:
  const neg, -1
  intr  _, test.mark, neg
  ret   i
.end
.func child(x:i64) -> i64
  intr  _, test.mark, x
  ret   x
.end`)
	const n = 1000
	o := testkit.Run(t, rt, p, "main", vmloop.I64(n))
	require.Equal(t, sched.Success, o.Kind, "got %v", o)
	require.Equal(t, int64(n), o.Value.Int(), "got %v", o)
	testkit.WaitFor(t, func() bool { m.mu.Lock(); defer m.mu.Unlock(); return len(m.arg) == n+1 })
	m.mu.Lock()
	defer m.mu.Unlock()
	end := slices.Index(m.arg, -1)
	// The spawner's loop costs ~5 reductions per spawn besides the spawn
	// itself: 1000 spawns fit in one default slice (25k) many times over
	// unless the spawns are charged.
	if end < n/2 {
		t.Fatalf("only %d of %d children ran before the spawner's loop ended (about %d expected)", end, n, n-64)
	}
}

// TestLIFOSpawnedBeforeWakersNextSlice: a task spawned into the lifo slot
// by a task that is then preempted runs before its spawner's next slice
// (it goes to the ring ahead of the spawner), not one slice later.
func TestLIFOSpawnedBeforeWakersNextSlice(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1, ReductionLimit: 2000})
	m := addMarks(t, rt)
	p := testkit.Load(t, rt, `
.func main() -> i64
  .local c:ref, x:i64, one:i64
  spawn c, child
  const x, 0
l:
  addi  x, x, 1
  jlti  x, 1500, l      ; 3000 reductions: preempted once, done in the second slice
  const one, 1
  intr  _, test.mark, one
  joini x, c
  ret   x
.end
.func child() -> i64
  .local two:i64
  const two, 2
  intr  _, test.mark, two
  ret   two
.end`)
	o := testkit.Run(t, rt, p, "main")
	require.Equal(t, sched.Success, o.Kind, "got %v", o)
	require.Equal(t, int64(2), o.Value.Int(), "got %v", o)
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.arg) != 2 || m.arg[0] != 2 || m.arg[1] != 1 {
		t.Fatalf("marks %v: the child must run between the spawner's first and second slice", m.arg)
	}
}

// TestLIFOSlotInMetrics: a task spawned by the running task sits in the
// worker's lifo slot; Metrics counts it as runnable, not in the ring.
func TestLIFOSlotInMetrics(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	s := hostbus.Scheduler(rt)
	var got sched.Metrics
	err := rt.RegisterIntrinsic("test.metrics", nil, vmloop.TVoid, 0, func(*bus.Call) (vmloop.Value, error) {
		got = s.Metrics()
		return vmloop.Void(), nil
	})
	require.NoError(t, err)
	p := testkit.Load(t, rt, `
.func main() -> i64
  .local c:ref, v:i64
  spawn c, child
  intr  _, test.metrics
  joini v, c
  ret   v
.end
.func child() -> i64
  .local x:i64
  const x, 7
  ret   x
.end`)
	o := testkit.Run(t, rt, p, "main")
	require.Equal(t, sched.Success, o.Kind, "got %v", o)
	require.Equal(t, int64(7), o.Value.Int(), "got %v", o)
	if got.RunnableTasks != 1 || len(got.Workers) != 1 || got.Workers[0].LocalQueue != 0 {
		t.Fatalf("with the child in the lifo slot: runnable %d, workers %+v", got.RunnableTasks, got.Workers)
	}
}

// TestOutcomeWhileDone: Done may make the task's rare part after it
// completed while another goroutine reads Outcome lock-free (run under
// -race: the rare part is published atomically).
func TestOutcomeWhileDone(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	p := testkit.Load(t, rt, ".func main() -> i64\n  .local r:i64\n  const r, 7\n  ret r\n.end\n")
	for i := 0; i < 50; i++ {
		jt, err := rt.Spawn(p, "main")
		require.NoError(t, err)
		task := hostbus.Task(jt)
		for {
			if _, ok := task.Outcome(); ok {
				break
			}
			time.Sleep(10 * time.Microsecond)
		}
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); <-task.Done() }()
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				if o, _ := task.Outcome(); o.Value.Int() != 7 {
					t.Errorf("outcome %v", o)
					return
				}
			}
		}()
		wg.Wait()
	}
}

// TestOutsideWakeKicksBusyWorker: with the only worker running a task on a
// long slice, a task spawned from outside runs at the hog's next safe point
// (the slice is ended early: spec §1.2, "an outside wake waits at most
// about one slice"), not after the hog's whole slice. The hog polls a flag
// that only the outside task sets, so the iterations it ran before seeing
// it say how much of its slice it used: with the kick, far less than one.
func TestOutsideWakeKicksBusyWorker(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1, ReductionLimit: sched.MaxReductionLimit})
	var flag, started atomic.Int64
	reg := func(name string, f func() int64) {
		require.NoError(t, rt.RegisterIntrinsic(name, nil, vmloop.TI64, 0, func(*bus.Call) (vmloop.Value, error) {
			return vmloop.I64(f()), nil
		}))
	}
	reg("test.flag", func() int64 { started.Store(1); return flag.Load() })
	reg("test.set", func() int64 { flag.Store(1); return 0 })
	p := testkit.Load(t, rt, `
.func hog() -> i64
  .local i:i64, f:i64
  const i, 0
l:
  addi  i, i, 1
  intr  f, test.flag
  jeqi  f, 0, l
  ret   i
.end
.func setter() -> i64
  .local x:i64
  intr  x, test.set
  ret   x
.end`)
	// Three rounds: each outside wake gets its kick (a kick once answered
	// does not stay outstanding).
	for round := 0; round < 3; round++ {
		flag.Store(0)
		started.Store(0)
		hog, err := rt.Spawn(p, "hog")
		require.NoError(t, err)
		testkit.WaitFor(t, func() bool { return started.Load() == 1 })
		kicks := hostbus.Scheduler(rt).Metrics().InjectKicks
		_, err = rt.Spawn(p, "setter")
		require.NoError(t, err)
		o, err := hog.Wait(context.Background())
		require.NoError(t, err, "round %d: hog", round)
		require.Equal(t, sched.Success, o.Kind, "round %d: hog: %v", round, o)
		// An iteration is 3 reductions: a whole slice is 3.3M of them.
		if n := o.Value.Int(); n > sched.MaxReductionLimit/3/4 {
			t.Fatalf("round %d: the hog ran %d iterations (%d in a whole slice) before the outside task ran", round, n, sched.MaxReductionLimit/3)
		}
		if k := hostbus.Scheduler(rt).Metrics().InjectKicks; k <= kicks {
			t.Fatalf("round %d: InjectKicks %d -> %d", round, kicks, k)
		}
	}
}

// TestWorkerYieldsToGo: a worker passes through Go's scheduler (yieldGo)
// at most every 8 ms (and a task that ran whole slices has isolated
// stacks), both while it runs tasks without a break and on its
// way into a park, so that Go's sysmon never takes it for a goroutine
// running for ever (see ARCHITECTURE.md). Without the hand-over GoYields
// stays 0 and the waits below time out.
func TestWorkerYieldsToGo(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	var stop atomic.Int64
	require.NoError(t, rt.RegisterIntrinsic("test.stop", nil, vmloop.TI64, 0, func(*bus.Call) (vmloop.Value, error) {
		return vmloop.I64(stop.Load()), nil
	}))
	p := testkit.Load(t, rt, `
.func hog() -> i64
  .local i:i64, f:i64
  const i, 0
l:
  addi  i, i, 1
  intr  f, test.stop
  jeqi  f, 0, l
  ret   i
.end
.func nop() -> i64
  .local r:i64
  const r, 0
  ret   r
.end`)
	yields := func() uint64 { return hostbus.Scheduler(rt).Metrics().Workers[0].GoYields }
	// Busy: one hog on default slices, never parking.
	hog, err := rt.Spawn(p, "hog")
	require.NoError(t, err)
	y0 := yields()
	testkit.WaitFor(t, func() bool { return yields() >= y0+3 })
	// It has run whole slices: its stacks share no cache line with
	// another task's (vmloop.Exec.Isolate; read after the yields, which
	// the worker counted after isolating them).
	if !sched.ExecOf(hostbus.Task(hog)).Isolated() {
		t.Error("a task that ran whole slices still has stacks that may share cache lines")
	}
	stop.Store(1)
	o, err := hog.Wait(context.Background())
	require.NoError(t, err, "hog")
	require.Equal(t, sched.Success, o.Kind, "hog: %v", o)
	// Parking: a short task every 10 ms, the worker parked in between. The
	// hand-overs counted are those made on the way into a park (a busy
	// worker's every-64-picks check would also fire here).
	s := hostbus.Scheduler(rt)
	y0 = s.ParkYields(0)
	for i := 0; i < 200 && s.ParkYields(0) < y0+3; i++ {
		time.Sleep(10 * time.Millisecond)
		_, err := rt.Spawn(p, "nop")
		require.NoError(t, err)
	}
	if y := s.ParkYields(0); y < y0+3 {
		t.Fatalf("a worker that parked between tasks for 10 ms each time handed over to Go on its way into a park %d times in 200 parks", y-y0)
	}
}
