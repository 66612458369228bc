package sched_test

import (
	"strings"
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

// fanOutMain spawns n children, child(i) for i in [0, n), joins them all
// and returns the sum of their results; a program adds its child.
const fanOutMain = `
.func main(n:i64) -> i64
  .local i:i64, sum:i64, v:i64, ts:ref, t:ref
  anew  ts, n, ref
  const i, 0
sp:
  jge   i, n, js
  spawn t, child, i
  asetr ts, i, t
  addi  i, i, 1
  jmp   sp
js:
  const i, 0
  const sum, 0
jl:
  jge   i, n, done
  agetr t, ts, i
  joini v, t
  add   sum, sum, v
  addi  i, i, 1
  jmp   jl
done:
  ret   sum
.end`

// latencyProgram spawns n children that yield and sleep, and joins them:
// spawns, requeues after yields, timer wakes and joins (wakes of main).
const latencyProgram = fanOutMain + `
.func child(x:i64) -> i64
  .local d:i64
  yield
  const d, 1000
  intr  _, time.sleep, d
  ret   x
.end`

func engineMetrics(t *testing.T, m sched.Metrics, name string) sched.EngineMetrics {
	t.Helper()
	for _, e := range m.Engines {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("no engine %q in %+v", name, m.Engines)
	return sched.EngineMetrics{}
}

func dispatches(m sched.Metrics) (n uint64) {
	for _, w := range m.Workers {
		n += w.Dispatches
	}
	return n
}

// TestLatencyHistogramsCountDispatches: with every enqueue sampled, the
// run-queue histogram holds one value per dispatch; the wake histogram
// holds the dispatches after a wake (every child's sleep, main's joins
// that parked), and every timer's lateness is recorded.
func TestLatencyHistogramsCountDispatches(t *testing.T) {
	testkit.Workers(t, []int{1, 2}, func(t *testing.T, workers int) {
		rt := testkit.Runtime(t, jade.Options{Workers: workers, LatencySample: 1})
		p := testkit.Load(t, rt, latencyProgram)
		const n = 50
		o := testkit.Run(t, rt, p, "main", vmloop.I64(n))
		require.Equal(t, int64(n*(n-1)/2), o.Value.Int())
		m := hostbus.Scheduler(rt).Metrics()
		lat := engineMetrics(t, m, "main").Latency
		require.Equal(t, 1, lat.SampleEvery)
		require.Equal(t, dispatches(m), lat.RunQueue.Count, "workers %d", workers)
		var sum uint64
		for _, c := range lat.RunQueue.Counts {
			sum += c
		}
		require.Equal(t, lat.RunQueue.Count, sum)
		// Each child is dispatched at its spawn and after its sleep, and
		// after its yield unless the yield went on in place (nothing else
		// to run on its worker: yieldInPlace, as a child stolen alone by
		// a second worker may find; under qemu-user on a busy machine 150
		// dispatches were counted for n = 50); main at least once.
		require.GreaterOrEqual(t, lat.RunQueue.Count, uint64(2*n+1))
		require.GreaterOrEqual(t, lat.Wake.Count, uint64(n), "every sleep ends in a wake")
		require.Less(t, lat.Wake.Count, lat.RunQueue.Count)
		require.Equal(t, uint64(n), lat.TimerLateness.Count, "one timer per sleep")
		require.Len(t, lat.RunQueue.BoundsNs, len(lat.RunQueue.Counts))
	})
}

// TestLatencySampling: the default samples one enqueue in 256, 64 one in
// 64 — a share of
// the dispatches, never more — and a negative LatencySample none; timer
// lateness is not sampled.
func TestLatencySampling(t *testing.T) {
	for _, c := range []struct {
		sample, every int
	}{{0, sched.DefaultLatencySample}, {64, 64}, {-1, 0}} {
		rt := testkit.Runtime(t, jade.Options{Workers: 1, LatencySample: c.sample})
		p := testkit.Load(t, rt, latencyProgram)
		const n = 200
		testkit.Run(t, rt, p, "main", vmloop.I64(n))
		m := hostbus.Scheduler(rt).Metrics()
		lat := engineMetrics(t, m, "main").Latency
		require.Equal(t, c.every, lat.SampleEvery)
		d := dispatches(m)
		if c.every == 0 {
			require.Zero(t, lat.RunQueue.Count)
			require.Zero(t, lat.Wake.Count)
		} else {
			// One worker counts every enqueue but main's (the host's).
			require.LessOrEqual(t, lat.RunQueue.Count, d/uint64(c.every)+1)
			require.GreaterOrEqual(t, lat.RunQueue.Count, (d-1)/uint64(c.every)-1)
		}
		require.Equal(t, uint64(n), lat.TimerLateness.Count)
	}
}

// TestWorkerTimes: a worker's wall time is busy + parked + searching +
// handed to Go; an idle runtime's workers have parked; a host intrinsic's
// time is counted as host-call time, within busy.
func TestWorkerTimes(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 2})
	require.NoError(t, rt.RegisterIntrinsic("test.nap", nil, vmloop.TVoid, 0, func(*bus.Call) (vmloop.Value, error) {
		time.Sleep(2 * time.Millisecond)
		return vmloop.Void(), nil
	}))
	p := testkit.Load(t, rt, `
.func main() -> i64
  .local z:i64
  intr  _, test.nap
  const z, 0
  ret   z
.end`)
	testkit.Run(t, rt, p, "main")
	s := hostbus.Scheduler(rt)
	// Idle workers park (an idle list entry may still be on its way in).
	testkit.WaitFor(t, func() bool {
		for _, w := range s.Metrics().Workers {
			if w.Times.ParkedNs == 0 {
				return false
			}
		}
		return true
	})
	var host int64
	for _, w := range s.Metrics().Workers {
		x := w.Times
		require.Positive(t, x.WallNs)
		require.Equal(t, x.WallNs, x.BusyNs+x.ParkedNs+x.SearchingNs+x.GoYieldNs, "worker %d: %+v", w.ID, x)
		require.LessOrEqual(t, x.HostCallNs+x.SyscallNs, x.BusyNs)
		require.InDelta(t, float64(x.BusyNs)/float64(x.WallNs), x.Utilisation, 1e-9)
		host += x.HostCallNs
	}
	require.GreaterOrEqual(t, host, int64(2*time.Millisecond), "the nap ran on a worker")
}

// TestTaskNames: a task names itself with task.set_name, its children
// do not inherit the name, a host spawn names its task, and the names
// show in the task reports and their text.
func TestTaskNames(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	p := testkit.Load(t, rt, `
.abi 1.4
.func main(gate:ref) -> i64
  .local s:ref, c:ref, v:i64
  const s, "acceptor"
  intr  _, task.set_name, s
  spawn c, child, gate
  joini v, c
  ret   v
.end
.func child(gate:ref) -> i64
  .local z:i64
  evwait gate
  const z, 7
  ret   z
.end
.func waiter(gate:ref) -> i64
  .local z:i64
  evwait gate
  const z, 1
  ret   z
.end`)
	gate := rt.NewEvent()
	main, err := rt.Spawn(p, "main", gate)
	require.NoError(t, err)
	named, err := rt.SpawnWith(jade.SpawnOptions{Name: "host-side"}, p, "waiter", gate)
	require.NoError(t, err)
	s := hostbus.Scheduler(rt)
	testkit.WaitFor(t, func() bool { return s.WaitingTasks() == 3 })
	names := map[string]int{}
	var texts []string
	for _, r := range s.Tasks() {
		names[r.Name]++
		texts = append(texts, r.String())
		require.Nil(t, r.Stats, "statistics are off by default")
	}
	require.Equal(t, map[string]int{"acceptor": 1, "": 1, "host-side": 1}, names)
	require.Contains(t, strings.Join(texts, "\n"), `"host-side" (engine main) Waiting`)
	require.NoError(t, rt.Broadcast(gate))
	o, err := main.Wait(t.Context())
	require.NoError(t, err)
	require.Equal(t, int64(7), o.Value.Int())
	_, err = named.Wait(t.Context())
	require.NoError(t, err)
}

// TestTaskSetNameNeedsABI14: a program declaring an older ABI cannot
// import task.set_name.
func TestTaskSetNameNeedsABI14(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	_, err := rt.Load("old.jasm", []byte(`
.abi 1.3
.func main() -> i64
  .local s:ref, z:i64
  const s, "x"
  intr  _, task.set_name, s
  const z, 0
  ret   z
.end`))
	require.ErrorContains(t, err, "needs intrinsic ABI 1.4")
}

// TestTaskStats: with TaskStats, a task that yields k times and then
// waits reports k+1 slices, the reductions it used, and time Runnable.
func TestTaskStats(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1, TaskStats: true})
	p := testkit.Load(t, rt, `
.func main(k:i64, gate:ref) -> i64
  .local i:i64
  const i, 0
l:
  jge   i, k, w
  yield
  addi  i, i, 1
  jmp   l
w:
  evwait gate
  ret   i
.end`)
	gate := rt.NewEvent()
	const k = 5
	task, err := rt.Spawn(p, "main", vmloop.I64(k), gate)
	require.NoError(t, err)
	s := hostbus.Scheduler(rt)
	testkit.WaitFor(t, func() bool { return s.WaitingTasks() == 1 })
	rs := s.Tasks()
	require.Len(t, rs, 1)
	st := rs[0].Stats
	require.NotNil(t, st)
	require.Equal(t, int64(k+1), st.Slices)
	require.GreaterOrEqual(t, st.Reductions, uint64(3*k))
	require.GreaterOrEqual(t, st.RunnableNs, int64(0))
	require.NoError(t, rt.Signal(gate))
	o, err := task.Wait(t.Context())
	require.NoError(t, err)
	require.Equal(t, int64(k), o.Value.Int())
}

// TestSpawnNamedChildrenUnnamed: after SpawnNamed("acceptor"), the tasks
// the acceptor spawns are not "acceptor": each connection task has no
// name until it names itself.
func TestSpawnNamedChildrenUnnamed(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	p := testkit.Load(t, rt, `
.abi 1.4
.func acceptor(gate:ref) -> i64
  .local a:ref, b:ref, v:i64, w:i64
  spawn a, conn, gate
  spawn b, named_conn, gate
  joini v, a
  joini w, b
  add   v, v, w
  ret   v
.end
.func conn(gate:ref) -> i64
  .local z:i64
  evwait gate
  const z, 1
  ret   z
.end
.func named_conn(gate:ref) -> i64
  .local s:ref, z:i64
  const s, "conn-2"
  intr  _, task.set_name, s
  evwait gate
  const z, 2
  ret   z
.end`)
	gate := rt.NewEvent()
	acc, err := rt.SpawnWith(jade.SpawnOptions{Name: "acceptor"}, p, "acceptor", gate)
	require.NoError(t, err)
	s := hostbus.Scheduler(rt)
	testkit.WaitFor(t, func() bool { return s.WaitingTasks() == 3 })
	byFunc := map[string]string{}
	for _, r := range s.Tasks() {
		byFunc[r.Func] = r.Name
	}
	require.Equal(t, map[string]string{"acceptor": "acceptor", "conn": "", "named_conn": "conn-2"}, byFunc)
	require.NoError(t, rt.Broadcast(gate))
	o, err := acc.Wait(t.Context())
	require.NoError(t, err)
	require.Equal(t, int64(3), o.Value.Int())
}
