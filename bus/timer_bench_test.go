package bus_test

import (
	"testing"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

const timerBenchProg = `
.abi 1.1
; arm_cancel arms n timers that never fire: each join waits under a 1 s
; time.timeout for a child that ends at once, and the join's end cancels
; the timer in the worker's own shard.
.func arm_cancel(n:i64) -> i64
  .local i:i64, c:ref, d:i64
  const d, 1000000000
  const i, 0
l:
  jge  i, n, e
  spawn c, nop
  intr _, time.timeout, d
  joinv c
  addi i, i, 1
  jmp  l
e:
  ret  i
.end
; spawn_join is arm_cancel without the timeout: the part of its cost that
; is not the timer's.
.func spawn_join(n:i64) -> i64
  .local i:i64, c:ref
  const i, 0
l:
  jge  i, n, e
  spawn c, nop
  joinv c
  addi i, i, 1
  jmp  l
e:
  ret  i
.end
.func nop() -> void
  retv
.end
`

// BenchmarkTimerArmCancel: a timer armed and cancelled through the
// scheduler by its owner (insert and local cancel under the shard's hold
// word), beside the same spawn and join without a timer.
func BenchmarkTimerArmCancel(b *testing.B) {
	for _, fn := range []string{"arm_cancel", "spawn_join"} {
		b.Run(fn, func(b *testing.B) {
			var m *bus.Member
			bb := testkit.Bus(b, bus.Config{Workers: 1}, func(bb *bus.Bus) {
				m = testkit.Engine(b, bb, "bench", sched.EngineRuntimeConfig{TimerWheel: testkit.Wheel()}, bus.CapAll)
			})
			p := testkit.Prog(b, bb, timerBenchProg)
			b.ResetTimer()
			o := testkit.SpawnAwait(b, m, p, fn, vmloop.I64(int64(b.N)))
			if o.Kind != sched.Success {
				b.Fatal(o)
			}
		})
	}
}
