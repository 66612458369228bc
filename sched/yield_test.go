package sched_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/vmloop"
)

// yieldsSrc: main spawns one yielder (n = 1) or two (n = 2), each
// yielding k times, and returns the sum of their counts.
const yieldsSrc = `
.func main(n:i64, k:i64) -> i64
  .local a:ref, b:ref, r:i64, s:i64
  const  s, 0
  spawn  a, yielder, k
  jlti   n, 2, one
  spawn  b, yielder, k
  joini  s, b
one:
  joini  r, a
  add    s, s, r
  ret    s
.end
.func yielder(k:i64) -> i64
  .local i:i64
  const i, 0
l:
  jge   i, k, e
  yield
  addi  i, i, 1
  jmp   l
e:
  ret   i
.end`

// yieldDispatches runs main(n, k) on a fresh 1-worker runtime and returns
// the worker's dispatch count.
func yieldDispatches(t *testing.T, n, k int64) uint64 {
	t.Helper()
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	p := testkit.Load(t, rt, yieldsSrc)
	o, err := rt.Run(context.Background(), p, "main", vmloop.I64(n), vmloop.I64(k))
	require.NoError(t, err)
	require.Equal(t, n*k, o.Value.Int())
	return rt.Observe().Metrics().Workers[0].Dispatches
}

// TestYieldInPlace: a yield with nothing else to run on its worker goes
// on in its slice (far fewer dispatches than yields), and yields of
// tasks that share a worker still hand it over at each yield (a dispatch
// per yield: none runs ahead of the other).
func TestYieldInPlace(t *testing.T) {
	const k = 10_000
	alone := yieldDispatches(t, 1, k)
	require.Less(t, alone, uint64(k/8), "a lone yielder was dispatched at most yields")
	require.Greater(t, alone, uint64(k/64), "a lone yielder never passed through a pick (find's inject look and Go hand-over)")
	shared := yieldDispatches(t, 2, k)
	require.GreaterOrEqual(t, shared, uint64(2*k), "two yielders on one worker did not alternate at each yield")
}
