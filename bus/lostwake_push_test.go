package bus_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// TestQueuedTaskWakesAParkedWorker guards the nIdle, nSearching / push
// pair (sched/doc.go) on the local run queue: a task pushed on a busy
// worker's queue must reach the other worker when that one is about to
// park. Round after round, main spawns sig(k) and nop (nop takes the lifo
// slot and pushes sig(k) onto the worker's queue, then notifies), then
// holds its worker in host.wait until sig(k) has run: only the other
// worker can run it meanwhile. With a push whose tail store was not
// sequentially consistent, the other worker, leaving its search just
// then, missed the push while the pusher missed the search's end, and
// parked: sig(k) waited as long as the host call (about one round in
// 8,000 on a 2-vCPU VM). A wait of seconds is such a park: a worker that
// is merely slow takes microseconds.
func TestQueuedTaskWakesAParkedWorker(t *testing.T) {
	rounds := int64(100_000)
	if testing.Short() {
		rounds = 20_000
	}
	const stuck = 2 * time.Second
	done := make([]atomic.Bool, rounds)
	var stalls atomic.Int64
	b := testkit.Bus(t, bus.Config{Workers: 2}, func(b *bus.Bus) {
		b.RegisterIntrinsic("host.signal", []vmloop.Type{vmloop.TI64}, vmloop.TI64, 0, func(c *bus.Call) (vmloop.Value, error) {
			done[c.Args()[0].Int()].Store(true)
			return vmloop.I64(0), nil
		})
		b.RegisterIntrinsic("host.wait", []vmloop.Type{vmloop.TI64}, vmloop.TI64, 0, func(c *bus.Call) (vmloop.Value, error) {
			k := c.Args()[0].Int()
			for t0 := time.Now(); !done[k].Load() && stalls.Load() == 0; {
				if time.Since(t0) > stuck {
					stalls.Add(1)
				}
			}
			// A delay that varies from round to round before the next
			// pushes, so that they meet the other worker's search at
			// every point.
			for d := time.Now(); time.Since(d) < time.Duration(k%40)*100*time.Nanosecond; {
			}
			return vmloop.I64(0), nil
		})
	})
	m := testkit.Engine(t, b, "e", sched.EngineRuntimeConfig{}, bus.CapSpawn|bus.CapHost)
	p := testkit.Prog(t, b, `
.func main(n:i64) -> i64
  .local i:i64, c:ref, d:ref, z:i64
  const i, 0
l:
  jge i, n, fin
  spawn c, sig, i
  spawn d, nop
  intr z, host.wait, i
  addi i, i, 1
  jmp l
fin:
  ret i
.end
.func sig(k:i64) -> i64
  .local z:i64
  intr z, host.signal, k
  ret z
.end
.func nop() -> i64
  .local z:i64
  const z, 0
  ret z
.end`)
	t0 := time.Now()
	o := testkit.SpawnAwait(t, m, p, "main", vmloop.I64(rounds))
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	t.Logf("%d rounds in %v", rounds, time.Since(t0))
	require.Zero(t, stalls.Load(), "a task queued on a busy worker waited %v while the other worker was parked", stuck)
}
