package bus_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// benchProg: stream sends n values from a producer task to a consumer
// through a channel of capacity cap; pingpong bounces one value n times
// between two tasks over two rendezvous channels.
const benchProg = `
.abi 1.5
.func stream(n:i64, cap:i64) -> i64
  .local ch:ref, t:ref, i:i64, s:i64
  intr  ch, chan.new_i64, cap
  spawn t, consume, ch
  const i, 0
loop:
  jge   i, n, done
  intr  _, chan.send_i64, ch, i
  addi  i, i, 1
  jmp   loop
done:
  intr  _, chan.close, ch
  joini s, t
  ret   s
.end

.func consume(ch:ref) -> i64
  .local s:i64, v:i64, e:ref
  const s, 0
  .try  b, x, h, e
b:
  intr  v, chan.recv_i64, ch
x:
  add   s, s, v
  jmp   b
h:
  ret   s
.end

.func pingpong(n:i64) -> i64
  .local a:ref, b:ref, z:i64, t:ref, i:i64, v:i64
  const z, 0
  intr  a, chan.new_i64, z
  intr  b, chan.new_i64, z
  spawn t, ponger, a, b, n
  const i, 0
  const v, 0
loop:
  jge   i, n, done
  intr  _, chan.send_i64, a, i
  intr  v, chan.recv_i64, b
  addi  i, i, 1
  jmp   loop
done:
  joinv t
  ret   v
.end

.func ponger(a:ref, b:ref, n:i64) -> void
  .local i:i64, v:i64
  const i, 0
loop:
  jge   i, n, done
  intr  v, chan.recv_i64, a
  intr  _, chan.send_i64, b, v
  addi  i, i, 1
  jmp   loop
done:
  retv
.end
`

// BenchmarkChanStream: one producer, one consumer, capacity 1,024; the
// time per message (go test ./bus -run - -bench ChanStream).
func BenchmarkChanStream(b *testing.B) {
	for _, w := range []int{1, 2} {
		b.Run(map[int]string{1: "workers=1", 2: "workers=2"}[w], func(b *testing.B) {
			bb, m := timeBus(b, w, sched.ResourceLimits{})
			p := testkit.Prog(b, bb, benchProg)
			b.ResetTimer()
			o := testkit.SpawnAwait(b, m, p, "stream", vmloop.I64(int64(b.N)), vmloop.I64(1024))
			require.Equal(b, sched.Success, o.Kind, "%v", o)
		})
	}
}

// BenchmarkChanPingPong: one message each way between two tasks over two
// rendezvous channels; the time per round trip.
func BenchmarkChanPingPong(b *testing.B) {
	for _, w := range []int{1, 2} {
		b.Run(map[int]string{1: "workers=1", 2: "workers=2"}[w], func(b *testing.B) {
			bb, m := timeBus(b, w, sched.ResourceLimits{})
			p := testkit.Prog(b, bb, benchProg)
			b.ResetTimer()
			o := testkit.SpawnAwait(b, m, p, "pingpong", vmloop.I64(int64(b.N)))
			require.Equal(b, sched.Success, o.Kind, "%v", o)
		})
	}
}
