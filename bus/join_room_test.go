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
