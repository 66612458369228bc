package sched_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// TestBroadcastChunked: an evbcast from a task to more waiters than one
// step wakes (4,096) wakes them over several dispatches of the
// broadcaster, which goes on only once all are woken, and every waiter
// completes. It used to wake them all in one step (1M waiters: 43–82 ms
// on a worker).
func TestBroadcastChunked(t *testing.T) {
	testkit.Workers(t, []int{1, 2}, func(t *testing.T, workers int) {
		rt := testkit.Runtime(t, jade.Options{Workers: workers, TaskStats: true, ReductionLimit: 1 << 20})
		p := testkit.Load(t, rt, `
.func waiter(ev:ref) -> i64
  .local z:i64
  evwait  ev
  const   z, 1
  ret     z
.end
.func bcast(ev:ref) -> i64
  .local z:i64
  evbcast ev
  const   z, 7
  ret     z
.end`)
		const chunks = 5
		const n = chunks*4096 + 3
		ev := rt.NewEvent()
		ws := make([]*jade.Task, n)
		for i := range ws {
			var err error
			ws[i], err = rt.Spawn(p, "waiter", ev)
			require.NoError(t, err)
		}
		testkit.WaitFor(t, func() bool { return hostbus.Scheduler(rt).WaitingTasks() == n })
		b, err := rt.Spawn(p, "bcast", ev)
		require.NoError(t, err)
		o, err := b.Wait(context.Background())
		require.NoError(t, err)
		require.Equal(t, sched.Success, o.Kind, "%v", o)
		st := hostbus.Task(b).Stats()
		require.NotNil(t, st)
		require.GreaterOrEqual(t, st.Slices, int64(chunks+1), "one dispatch per chunk of 4,096 wakes")
		for _, w := range ws {
			o, err := w.Wait(context.Background())
			require.NoError(t, err)
			require.Equal(t, sched.Success, o.Kind)
		}
	})
}

// TestSpawnCopyCharged: a spawn whose argument is a 100,000-element ref
// array is charged its copy out of the spawner's heap and into the
// child's (32 reductions an object each way), so the spawner is
// preempted at its next safe point instead of going on in the same slice
// (a spawn/join loop copied a 1M-element array over and over in one
// slice). It used to cost a spawn's flat 1/64 of the limit.
func TestSpawnCopyCharged(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1, TaskStats: true, ReductionLimit: 1 << 20})
	p := testkit.Load(t, rt, `
.func main(n:i64) -> i64
  .local i:i64, a:ref, s:ref, c:ref, k:i64
  anew    a, n, ref
  const   s, "x"
  const   i, 0
fill:
  asetr   a, i, s
  addi    i, i, 1
  jlt     i, n, fill
  spawn   c, child, a
  const   k, 0
spin:
  addi    k, k, 1
  jlti    k, 3, spin
  ret     k
.end
.func child(a:ref) -> i64
  .local n:i64
  alen    n, a
  ret     n
.end`)
	const n = 100_000
	tk, err := rt.Spawn(p, "main", vmloop.I64(n))
	require.NoError(t, err)
	o, err := tk.Wait(context.Background())
	require.NoError(t, err)
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.Equal(t, int64(3), o.Value.Int())
	st := hostbus.Task(tk).Stats()
	require.NotNil(t, st)
	// the reductions as published where its last slice but one ended
	require.GreaterOrEqual(t, st.Reductions, uint64(2*n*32-1<<20), "charged the copy")
	// the whole of main fits one slice; the copy's charge spreads it
	// over about one slice a limit's worth (6.4M reductions)
	require.GreaterOrEqual(t, st.Slices, int64(6), "preempted while it copies")
}
