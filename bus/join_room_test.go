package bus_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
)

// joinRoomProg: the parent holds 40 MB and joins a child that returns
// 40 MB more, which the parent's 64 MiB heap cannot take.
const joinRoomProg = `
.func main() -> ref
  .local mine:ref, n:i64, t:ref, r:ref, e:ref, s:ref, k:ref
  const n, 40000000
  bnew mine, n
  spawn t, big
  .try b, x, h, e
b:
  joinr r, t
x:
  const s, "joined"
  ret s
h:
  errkind k, e
  errmsg s, e
  const r, ": "
  sconcat k, k, r
  sconcat k, k, s
  ret k
.end
.func big() -> ref
  .local n:i64, b:ref
  const n, 40000000
  bnew b, n
  ret b
.end
`

// TestJoinResultTooBigIsCatchable: a join result that the joiner's heap
// cannot take is a ResourceError thrown at the join, which .try catches
// (it trapped the joiner with "heap limit" before: a child could make its
// parent trap).
func TestJoinResultTooBigIsCatchable(t *testing.T) {
	b, m := timeBus(t, 2, sched.ResourceLimits{})
	p := testkit.Prog(t, b, joinRoomProg)
	o := testkit.SpawnAwait(t, m, p, "main")
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.Contains(t, o.Value.String(), "ResourceError: task.join_ref: ")
	require.Contains(t, o.Value.String(), "exceeds the heap limit")
}

// joinScalarProg joins children that return an i64, an f64 and nothing
// (their results are kept in the task record and delivered without an
// Outcome), before and after they complete, and reads one's outcome.
const joinScalarProg = `
.func main() -> f64
  .local t:ref, u:ref, v:ref, i:i64, k:i64, f:f64, g:f64
  spawn t, seven
  spawn u, half
  spawn v, nothing
  joini i, t
  joinf f, u
  joinv v
  yield
  joini k, t
  add i, i, k
  outcome k, u
  add i, i, k
  itof g, i
  fadd f, f, g
  ret f
.end
.func seven() -> i64
  .local n:i64
  const n, 7
  ret n
.end
.func half() -> f64
  .local x:f64
  const x, 0.5
  ret x
.end
.func nothing()
  ret
.end
`

// TestJoinScalarResults: i64, f64 and void results reach their joiners,
// twice for one task, and outcome reports a Success.
func TestJoinScalarResults(t *testing.T) {
	b, m := timeBus(t, 2, sched.ResourceLimits{})
	p := testkit.Prog(t, b, joinScalarProg)
	o := testkit.SpawnAwait(t, m, p, "main")
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.Equal(t, 7+7+float64(sched.Success)+0.5, o.Value.Float())
}
