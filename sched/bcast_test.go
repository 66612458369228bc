package sched_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
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
		testkit.WaitFor(t, func() bool { return rt.Bus().Scheduler().WaitingTasks() == n })
		b, err := rt.Spawn(p, "bcast", ev)
		require.NoError(t, err)
		o, err := b.Wait(context.Background())
		require.NoError(t, err)
		require.Equal(t, sched.Success, o.Kind, "%v", o)
		st := b.Sched().Stats()
		require.NotNil(t, st)
		require.GreaterOrEqual(t, st.Slices, int64(chunks+1), "one dispatch per chunk of 4,096 wakes")
		for _, w := range ws {
			o, err := w.Wait(context.Background())
			require.NoError(t, err)
			require.Equal(t, sched.Success, o.Kind)
		}
	})
}
