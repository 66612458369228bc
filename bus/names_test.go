package bus_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
)

// TestTaskNameInJoinError: a join of a named task that was cancelled
// throws a TaskError naming it; task.set_name rejects a non-string and
// cuts a long name.
func TestTaskNameInJoinError(t *testing.T) {
	rt := testkit.ForcedRuntime(t, jade.Options{Workers: 1})
	p, err := rt.Load("n.jasm", []byte(`
.func main() -> i64
  .local c:ref, v:i64
  spawn  c, child
  yield
  cancel c
  joini  v, c
  ret    v
.end
.func child() -> i64
  .local s:ref, z:i64, e:ref
  const  s, "db-pool"
  intr   _, task.set_name, s
  evnew  e
  evwait e
  const  z, 1
  ret    z
.end
.func bad() -> i64
  .local a:ref, z:i64, n:i64
  const  n, 1
  anew   a, n, i64
  intr   _, task.set_name, a
  const  z, 1
  ret    z
.end`))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o, err := rt.Run(ctx, p, "main")
	require.NoError(t, err)
	require.Contains(t, o.String(), `task `)
	require.Contains(t, o.String(), `"db-pool" was cancelled`)
	o, err = rt.Run(ctx, p, "bad")
	require.NoError(t, err)
	require.Contains(t, o.String(), "task.set_name: argument is array<i64>, want string")
	long := strings.Repeat("x", bus.MaxTaskName+10)
	task, err := rt.SpawnWith(jade.SpawnOptions{Name: long}, p, "bad")
	require.NoError(t, err)
	require.Equal(t, long[:bus.MaxTaskName], task.Name())
	_, err = task.Wait(ctx)
	require.NoError(t, err)
}
