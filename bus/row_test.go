package bus_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

const rowProg = `
.abi 1.0
.func main() -> i64
  .local n:i64
  intr n, task.id
  ret n
.end
`

// TestRowIsTheIntrinsic: a central intrinsic is its command row. With
// task.id's row replaced by a probe row (declared in export_test.go only,
// granted by a capability of its own), the same program's task.id runs
// the probe's handler in an engine holding that capability and throws a
// CapabilityError in one that does not; with the row put back it returns
// the task's id again.
func TestRowIsTheIntrinsic(t *testing.T) {
	var with, without *bus.Member
	b := testkit.Bus(t, bus.Config{Workers: 2}, func(b *bus.Bus) {
		with = testkit.Engine(t, b, "with", sched.EngineRuntimeConfig{}, bus.CapAll)
		without = testkit.Engine(t, b, "without", sched.EngineRuntimeConfig{}, bus.CapSpawn)
	})
	p := testkit.Prog(t, b, rowProg)
	run := func(m *bus.Member) (*sched.Task, sched.Outcome) {
		task, err := m.Spawn(nil, p, "main")
		require.NoError(t, err)
		return task, testkit.Await(t, task)
	}

	task, o := run(with)
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.Equal(t, int64(task.ID()), o.Value.Int(), "the real row")

	calls, restore := bus.ProbeRow(vmloop.IntrTaskID, bus.CapUser0)
	_, o = run(with)
	_, denied := run(without)
	restore()
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.Equal(t, int64(4242), o.Value.Int(), "the probe row's handler")
	require.Equal(t, sched.Failure, denied.Kind, "%v", denied)
	require.Contains(t, denied.Value.String(), "lacks capability")
	require.Equal(t, int64(1), calls.Load(), "the check ran before the handler, which the denied call never reached")

	task, o = run(with)
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.Equal(t, int64(task.ID()), o.Value.Int(), "the real row is back")
}
