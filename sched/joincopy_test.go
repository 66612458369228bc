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

// srcJoinCopy: main(n) spawns child, which returns an n-element ref array
// of one string, joins it and returns its length.
const srcJoinCopy = `
.func main(n:i64) -> i64
  .local c:ref, a:ref, r:i64
  spawn   c, child, n
  joinr   a, c
  alen    r, a
  ret     r
.end
.func child(n:i64) -> ref
  .local i:i64, a:ref, s:ref
  anew    a, n, ref
  const   s, "x"
  const   i, 0
fill:
  asetr   a, i, s
  addi    i, i, 1
  jlt     i, n, fill
  ret     a
.end`

// TestJoinCopyInSteps: a 1M-element result is copied out of the child's
// heap over many of the child's slices and into the joiner's over many of
// the joiner's, in steps the worker takes between other tasks' slices,
// not in one step of each (about 0.25 s and 0.5 s); both VM loops.
func TestJoinCopyInSteps(t *testing.T) {
	const n = 1_000_000
	for _, goLoop := range []bool{false, true} {
		t.Run(map[bool]string{false: "native", true: "goloop"}[goLoop], func(t *testing.T) {
			rt := testkit.Runtime(t, jade.Options{Workers: 1, TaskStats: true, GoLoop: goLoop})
			p := testkit.Load(t, rt, srcJoinCopy)
			tk, err := rt.Spawn(p, "main", vmloop.I64(n))
			require.NoError(t, err)
			o, err := tk.Wait(context.Background())
			require.NoError(t, err)
			require.Equal(t, sched.Success, o.Kind, "%v", o)
			require.Equal(t, int64(n), o.Value.Int())
			st := hostbus.Task(tk).Stats()
			require.NotNil(t, st)
			// the import owes 33M reductions: about 1,000 slices of the
			// default limit (it took 2 or 3)
			require.GreaterOrEqual(t, st.Slices, int64(500), "the import is spread over the joiner's slices")
			require.GreaterOrEqual(t, st.Reductions, uint64(n*32-1<<20), "charged the import")
		})
	}
}

// TestJoinCopyCancelled: a joiner cancelled while a joined result is being
// imported ends Cancelled, and everything goes back: the objects the
// import made go with its heap, the child's outcome with the last handle
// to it, and the engine's memory count returns to zero.
func TestJoinCopyCancelled(t *testing.T) {
	const n = 1_000_000
	rt := testkit.Runtime(t, jade.Options{Workers: 1, TaskStats: true, ReductionLimit: 5000})
	p := testkit.Load(t, rt, srcJoinCopy)
	eng := hostbus.Scheduler(rt)
	tk, err := rt.Spawn(p, "main", vmloop.I64(n))
	require.NoError(t, err)
	mem := hostbus.Task(tk).Engine()
	// the child's fill and export take about 7,000 slices, then the
	// import about 6,600 of main's
	testkit.WaitFor(t, func() bool { return eng.LiveTasks() == 1 && hostbus.Task(tk).Stats().Slices >= 100 })
	at := hostbus.Task(tk).Stats().Slices
	require.NoError(t, tk.Cancel())
	o, err := tk.Wait(context.Background())
	require.NoError(t, err)
	require.Equal(t, sched.Cancelled, o.Kind, "%v", o)
	require.Less(t, at, int64(5000), "cancelled during the import")
	testkit.WaitFor(t, func() bool { return eng.LiveTasks() == 0 && mem.MemoryBytes() == 0 })
}
