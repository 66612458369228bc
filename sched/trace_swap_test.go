package sched_test

import (
	"bytes"
	"context"
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

// swapSrc forces the lifo swap under a held spawn: main spawns child
// (the spawn is held for the end of main's slice, the child waits in the
// lifo slot), then signals the event waiter waits on, which takes the
// lifo slot and moves the child to the local queue, where the other
// worker steals it; main's slice goes on until the child has run.
const swapSrc = `
.func main(ev:ref) -> i64
  .local c:ref, r:i64
  spawn    c, child
  evsignal ev
again:
  intr     r, test.ran
  jeqi     r, 0, again
  ret      r
.end
.func child() -> i64
  .local z:i64
  intr  _, test.mark
  const z, 1
  ret   z
.end
.func waiter(ev:ref) -> i64
  .local z:i64
  evwait ev
  const  z, 2
  ret    z
.end
`

// TestTraceSpawnBeforeStolenChild: a spawn held for its slice's end is
// written when a wake later in the slice moves the child out of the lifo
// slot, so that its event precedes the child's first dispatch on the
// worker that stole it (it was written at the slice's end, after it).
func TestTraceSpawnBeforeStolenChild(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 2, ReductionLimit: 10_000_000})
	var ran atomic.Int64
	var deadline atomic.Int64
	require.NoError(t, rt.RegisterIntrinsic("test.mark", nil, vmloop.TVoid, 0, func(*bus.Call) (vmloop.Value, error) {
		ran.Store(1)
		return vmloop.Void(), nil
	}))
	require.NoError(t, rt.RegisterIntrinsic("test.ran", nil, vmloop.TI64, 0, func(*bus.Call) (vmloop.Value, error) {
		if r := ran.Load(); r != 0 || time.Now().UnixNano() < deadline.Load() {
			return vmloop.I64(r), nil
		}
		return vmloop.I64(-1), nil // not stolen within the deadline
	}))
	p, err := rt.Load("swap.jasm", []byte(swapSrc))
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, rt.Observe().StartTrace(&buf))
	const rounds = 5
	for range rounds {
		ran.Store(0)
		deadline.Store(time.Now().Add(10 * time.Second).UnixNano())
		ev := rt.NewEvent()
		w, err := rt.Spawn(p, "waiter", ev)
		require.NoError(t, err)
		testkit.WaitFor(t, func() bool { return hostbus.Task(w).State() == sched.Waiting }, "the waiter waits")
		o, err := rt.Run(context.Background(), p, "main", ev)
		require.NoError(t, err)
		require.Equal(t, int64(1), o.Value.Int(), "the child ran while main's slice went on: %v", o)
		o, err = w.Wait(context.Background())
		require.NoError(t, err)
		require.Equal(t, int64(2), o.Value.Int(), "%v", o)
	}
	require.NoError(t, rt.Observe().StopTrace())

	tr := parseTrace(t, buf.Bytes())
	require.Zero(t, tr.OtherData.DroppedEvents)
	first := map[uint64]float64{} // a task's first dispatch
	tid := map[uint64]int{}
	for _, e := range tr.TraceEvents {
		if e.Ph == "X" && e.Cat == "task" {
			id := uint64(e.Args["task"].(float64))
			if f, ok := first[id]; !ok || e.Ts < f {
				first[id], tid[id] = e.Ts, e.Tid
			}
		}
	}
	const eps = 1e-3
	children, stolen := 0, 0
	for _, e := range tr.TraceEvents {
		if e.Ph != "i" || e.Name != "spawn" || e.Args["by"].(float64) == 0 {
			continue
		}
		child := uint64(e.Args["task"].(float64))
		f, ok := first[child]
		require.True(t, ok, "task %d spawned, never dispatched", child)
		if e.Tid != tid[child] {
			stolen++
		}
		require.LessOrEqual(t, e.Ts, f+eps, "the spawn of %d is %.1f µs after its first dispatch", child, e.Ts-f)
		children++
	}
	require.Equal(t, rounds, children, "a spawn by main in each round")
	// The swap shape: the other worker took the child in main's slice
	// (a slice of up to 10M reductions, which a steal beats by far).
	require.Positive(t, stolen, "no child was stolen: the shape was not forced")
}
