package sched_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// srcSpawnCopy: main(n, spin) fills an n-element ref array with one
// string, spawns child (which spins forever when spin is set) with it and
// joins it.
const srcSpawnCopy = `
.func main(n:i64, spin:i64) -> i64
  .local i:i64, a:ref, s:ref, c:ref, r:i64
  anew    a, n, ref
  const   s, "x"
  const   i, 0
fill:
  asetr   a, i, s
  addi    i, i, 1
  jlt     i, n, fill
  spawn   c, child, a, spin
  joini   r, c
  ret     r
.end
.func child(a:ref, spin:i64) -> i64
  .local n:i64
  alen    n, a
  jnz     spin, child_spin
  ret     n
child_spin:
  jmp     child_spin
.end`

// TestSpawnCopyInSteps: the 1M-element argument of a spawn is copied over
// many slices of the spawner, in steps the worker takes between other
// tasks' slices, not in one step of about 0.5 s; both VM loops.
func TestSpawnCopyInSteps(t *testing.T) {
	const n = 1_000_000
	for _, goLoop := range []bool{false, true} {
		t.Run(fmt.Sprintf("goloop=%v", goLoop), func(t *testing.T) {
			rt := testkit.Runtime(t, jade.Options{Workers: 1, TaskStats: true, GoLoop: goLoop})
			p := testkit.Load(t, rt, srcSpawnCopy)
			tk, err := rt.Spawn(p, "main", vmloop.I64(n), vmloop.I64(0))
			require.NoError(t, err)
			o, err := tk.Wait(context.Background())
			require.NoError(t, err)
			require.Equal(t, sched.Success, o.Kind, "%v", o)
			require.Equal(t, int64(n), o.Value.Int())
			st := hostbus.Task(tk).Stats()
			require.NotNil(t, st)
			// the fill takes about 160 slices of the default limit, the
			// copy (64M reductions owed) about 2,560
			require.GreaterOrEqual(t, st.Slices, int64(2000), "the copy is spread over slices")
		})
	}
}

// TestSpawnCopyCancelled: a spawner cancelled while its spawn's argument
// is being copied ends Cancelled, and the child's Exec is dropped with
// what its heap took of the engine's memory: the child never runs (it
// would spin forever and hold the array).
func TestSpawnCopyCancelled(t *testing.T) {
	const n = 1_000_000
	rt := testkit.Runtime(t, jade.Options{Workers: 1, TaskStats: true, ReductionLimit: 5000})
	p := testkit.Load(t, rt, srcSpawnCopy)
	eng := hostbus.Scheduler(rt)
	tk, err := rt.Spawn(p, "main", vmloop.I64(n), vmloop.I64(1))
	require.NoError(t, err)
	mem := hostbus.Task(tk).Engine()
	// the fill takes about 800 slices, the copy about 12,800 more
	testkit.WaitFor(t, func() bool { return hostbus.Task(tk).Stats().Slices >= 2000 })
	require.NoError(t, tk.Cancel())
	o, err := tk.Wait(context.Background())
	require.NoError(t, err)
	require.Equal(t, sched.Cancelled, o.Kind, "%v", o)
	testkit.WaitFor(t, func() bool { return eng.LiveTasks() == 0 && mem.MemoryBytes() == 0 })
}
