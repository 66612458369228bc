package bus_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// TestBlockingCallArgumentsCount: ten tasks each pass a 200k-element ref
// array (1.6 MB in the heap, about 22 MB once copied out as Values) to a
// blocking call that waits, under a 48 MiB budget. While the calls wait,
// the engine's budget counts the arguments they hold, so that only the
// calls that fit are made: the others throw a catchable ResourceError,
// or trap when the copy itself does not fit.
// (The copies were counted only while they were made: 224 MB held under
// a 48 MiB limit.)
func TestBlockingCallArgumentsCount(t *testing.T) {
	b := testkit.Bus(t, bus.Config{Workers: 1, BlockingPool: 4}, nil)
	release := make(chan struct{})
	var held, argBytes atomic.Int64
	require.NoError(t, b.RegisterBlockingIntrinsic("host.hold", []vmloop.Type{vmloop.TRef}, vmloop.TI64, 0,
		func(ctx context.Context, args []vmloop.Value) (vmloop.Value, error) {
			argBytes.Store(args[0].HostBytes())
			held.Add(1)
			defer held.Add(-1)
			select {
			case <-release:
			case <-ctx.Done():
			}
			return vmloop.I64(int64(args[0].Len())), nil
		}))
	p := testkit.Prog(t, b, `
.abi 1.1
.func caller(n:i64) -> ref
  .local a:ref, r:i64, e:ref, s:ref
  anew    a, n, ref
  .try    c, z, h, e
c:
  intr    r, host.hold, a
z:
  const   s, "held"
  ret     s
h:
  errkind s, e
  ret     s
.end`)
	const budget = 48 << 20
	m, err := b.RegisterEngine("m", sched.EngineRuntimeConfig{Limits: sched.ResourceLimits{MemoryBytes: budget}}, bus.CapAll)
	require.NoError(t, err)
	e := m.Engine()
	var tasks []*sched.Task
	for range 10 {
		tasks = append(tasks, mustSpawn(t, m, p, "caller", 200_000))
	}
	settled := func() bool { // every task has made its call or ended
		n := e.BlockingCalls()
		for _, task := range tasks {
			select {
			case <-task.Done():
				n++
			default:
			}
		}
		return n == int64(len(tasks)) && held.Load() == min(e.BlockingCalls(), 4)
	}
	require.Eventually(t, settled, 10*time.Second, time.Millisecond, "the tasks settle")
	require.GreaterOrEqual(t, e.MemoryBytes(), held.Load()*argBytes.Load(),
		"%d calls hold %d bytes of arguments each; the budget counts %d bytes", held.Load(), argBytes.Load(), e.MemoryBytes())
	close(release)
	kinds := map[string]int{}
	for _, task := range tasks {
		o := testkit.Await(t, task)
		if o.Kind == sched.Trapped {
			require.Equal(t, vmloop.TrapHeapLimit, o.Trap.Code, "%v", o)
			kinds["trap"]++
			continue
		}
		require.Equal(t, sched.Success, o.Kind, "%v", o)
		kinds[o.Value.String()]++
	}
	t.Logf("outcomes %v; %d bytes of arguments a call", kinds, argBytes.Load())
	require.Positive(t, kinds[vmloop.ErrKindResource]+kinds["trap"], "every call fits: %v", kinds)
	require.Positive(t, kinds["held"])
	require.Zero(t, e.BlockingCalls())
	testkit.WaitFor(t, func() bool { return e.MemoryBytes() < 1<<20 }, func() string { return "the arguments' bytes are not given back" })
}
