package sched_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// BenchmarkHostCall: one call of a trivial host intrinsic on a worker
// from a Jade loop, with no profile running (what a worker does around
// a host call: its timing and the CPU-sample checks, profile.go).
func BenchmarkHostCall(b *testing.B) {
	rt := testkit.Runtime(b, jade.Options{Workers: 1})
	require.NoError(b, rt.RegisterIntrinsic("host.id", []vmloop.Type{vmloop.TI64}, vmloop.TI64, 0,
		func(c *bus.Call) (vmloop.Value, error) { return c.Args()[0], nil }))
	p := testkit.Load(b, rt, `.func main(n:i64) -> i64
  .local i:i64, v:i64
  const i, 0
loop:
  intr  v, host.id, i
  addi  i, i, 1
  jlt   i, n, loop
  ret   v
.end`)
	b.ResetTimer()
	o := testkit.Run(b, rt, p, "main", vmloop.I64(int64(b.N)))
	b.StopTimer()
	require.Equal(b, sched.Success, o.Kind)
}
