package bus_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/timerwheel"
	"github.com/jadevm/jade/vmloop"
)

const shardProg = `
.abi 1.1
.func wait_signalled(ev:ref) -> i64
  .local z:i64, d:i64
  const d, 10000000000
  intr _, time.timeout, d
  evwait ev                   ; its timer lives where it ran; the signal may resume it elsewhere
  const z, 0
  ret z
.end
.func nap() -> i64
  .local z:i64
  const z, 1000
  intr _, time.sleep, z       ; the first timer of a new engine on this worker makes its shard
  const z, 0
  ret z
.end
`

// TestRemoteTimerCancelWhileShardsGrow: a task resumed on another worker
// cancels its timer in the shard of the worker that armed it while that
// worker makes a shard for an engine it meets for the first time. The
// canceller used to index the owner's shard list, which the owner grows
// with append (a data race under -race; on arm64 a nil wheel).
func TestRemoteTimerCancelWhileShardsGrow(t *testing.T) {
	b, m := timeBus(t, 2, sched.ResourceLimits{})
	p := testkit.Prog(t, b, shardProg)
	w := timerwheel.DefaultConfig()
	for round := range 40 {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // new engines meet both workers for the first time
			defer wg.Done()
			for i := range 4 {
				n, err := b.RegisterEngine(fmt.Sprintf("e%d-%d", round, i), sched.EngineRuntimeConfig{TimerWheel: &w}, bus.CapAll)
				require.NoError(t, err)
				for range 4 {
					require.Equal(t, sched.Success, testkit.SpawnAwait(t, n, p, "nap").Kind)
				}
			}
		}()
		evs := make([]vmloop.Value, 32)
		tasks := make([]*sched.Task, len(evs))
		for i := range evs {
			evs[i] = m.NewEvent()
			var err error
			tasks[i], err = m.Spawn(nil, p, "wait_signalled", evs[i])
			require.NoError(t, err)
		}
		for i, tk := range tasks {
			waitState(t, tk, sched.Waiting)
			require.NoError(t, m.Signal(evs[i]))
		}
		for _, tk := range tasks {
			require.Equal(t, sched.Success, testkit.Await(t, tk).Kind)
		}
		wg.Wait()
	}
}
