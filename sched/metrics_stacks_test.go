package sched_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
)

const stacksSrc = `.func main(gate:ref) -> i64
  .local v:i64
  call  v, outer, gate
  ret   v
.end
.func outer(gate:ref) -> i64
  .local v:i64
  call  v, inner, gate
  ret   v
.end
.func inner(gate:ref) -> i64
  .local z:i64
  evwait gate
  const z, 3
  ret   z
.end
.func hog() -> i64
  .local i:i64
  const i, 0
l:
  addi  i, i, 1
  jmp   l
.end`

// TestTasksWithStacks: a dump stops the workers, reads every task's Jade
// stack with file:line (a parked task's nested calls, a busy loop's
// frame, or its first line before it first ran), and lets them go on; it fails once the workers are stopped.
func TestTasksWithStacks(t *testing.T) {
	testkit.Workers(t, []int{1, 2}, func(t *testing.T, workers int) {
		rt, err := jade.New(jade.Options{Workers: workers})
		require.NoError(t, err)
		p, err := rt.Load("stacks.jasm", []byte(stacksSrc))
		require.NoError(t, err)
		gate := rt.NewEvent()
		main, err := rt.SpawnWith(jade.SpawnOptions{Name: "nested"}, p, "main", gate)
		require.NoError(t, err)
		hog, err := rt.Spawn(p, "hog")
		require.NoError(t, err)
		s := hostbus.Scheduler(rt)
		testkit.WaitFor(t, func() bool { return s.WaitingTasks() == 1 })
		for range 3 {
			rs, err := s.TasksWithStacks(10 * time.Second)
			require.NoError(t, err)
			require.Len(t, rs, 2)
			byID := map[uint64]sched.TaskReport{}
			for _, r := range rs {
				byID[r.ID] = r
			}
			nested := byID[main.ID()]
			require.Equal(t, "nested", nested.Name)
			require.Equal(t, sched.Waiting, nested.State)
			require.Len(t, nested.Stack, 3)
			for i, want := range []struct {
				fn   string
				line int
			}{{"inner", 13}, {"outer", 8}, {"main", 3}} {
				f := nested.Stack[i]
				require.Equal(t, want.fn, f.Func, "frame %d", i)
				require.Equal(t, "stacks.jasm", f.File)
				require.Equal(t, want.line, f.Line, "frame %d: %s", i, f)
			}
			h := byID[hog.ID()]
			require.NotEqual(t, sched.Waiting, h.State)
			require.Len(t, h.Stack, 1)
			require.Equal(t, "hog", h.Stack[0].Func)
			require.Contains(t, []int{19, 21, 22}, h.Stack[0].Line, "%s", h.Stack[0])
		}
		// The workers went on: the parked task completes, the hog can be
		// cancelled.
		require.NoError(t, rt.Broadcast(gate))
		o, err := main.Wait(t.Context())
		require.NoError(t, err)
		require.Equal(t, int64(3), o.Value.Int())
		require.NoError(t, hog.Cancel())
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		require.NoError(t, rt.Shutdown(ctx))
		cancel()
		_, err = s.TasksWithStacks(time.Second)
		require.Error(t, err)
	})
}
