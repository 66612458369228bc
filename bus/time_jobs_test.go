package bus_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// TestFreedJobsEnd: a task makes n periodic jobs and frees k of them, then
// sleeps: the engine lists n-k jobs, and the freed ones' share of the
// memory budget is given back; the task's end ends the rest. (A freed job
// stayed listed and held its memory until the task ended.)
func TestFreedJobsEnd(t *testing.T) {
	b, m := timeBus(t, 1, sched.ResourceLimits{})
	p := testkit.Prog(t, b, `
.abi 1.1
.func jobs(n:i64, k:i64) -> void
  .local i:i64, per:i64, pol:i64, d:i64, js:ref, j:ref
  anew    js, n, ref
  const   per, 1000000000
  const   pol, 0
  const   i, 0
mk:
  jge     i, n, fr
  intr    j, time.periodic, per, pol
  asetr   js, i, j
  addi    i, i, 1
  jmp     mk
fr:
  const   i, 0
f:
  jge     i, k, sl
  agetr   j, js, i
  free    j
  addi    i, i, 1
  jmp     f
sl:
  const   d, 60000000000
  intr    _, time.sleep, d
  ret
.end`)
	e := m.Engine()
	base := e.MemoryBytes()
	task, err := m.Spawn(nil, p, "jobs", vmloop.I64(1000), vmloop.I64(0))
	require.NoError(t, err)
	testkit.WaitFor(t, func() bool { return len(e.Jobs()) == 1000 }, "1000 jobs listed")
	withAll := e.MemoryBytes()
	require.NoError(t, m.Cancel(task))
	testkit.Await(t, task)
	require.Empty(t, e.Jobs(), "jobs outlive their task")

	task, err = m.Spawn(nil, p, "jobs", vmloop.I64(1000), vmloop.I64(900))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(e.Jobs()) == 100 }, 10*time.Second, time.Millisecond,
		"freed jobs stay listed")
	freed := e.MemoryBytes()
	require.Less(t, freed-base, (withAll-base)/2, "freed jobs still counted (%d bytes with 1000, %d with 100, base %d)", withAll, freed, base)
	require.NoError(t, m.Cancel(task))
	testkit.Await(t, task)
	require.Empty(t, e.Jobs())
	waitTimers(t, e)
}

// TestSharedJobEndsWithItsLastHandle: a task makes a job, hands it to a
// child on another worker and frees its own handle; the child frees its
// copy. The job ends when the last handle goes, whichever worker drops it
// (run under -race: the two lists are changed from both workers). The
// task's last job, kept, is then the only one listed.
func TestSharedJobEndsWithItsLastHandle(t *testing.T) {
	b, m := timeBus(t, 2, sched.ResourceLimits{})
	p := testkit.Prog(t, b, `
.abi 1.1
.func share(n:i64) -> void
  .local i:i64, per:i64, pol:i64, d:i64, j:ref, c:ref
  const   per, 1000000000
  const   pol, 0
  const   i, 0
l:
  jge     i, n, sl
  intr    j, time.periodic, per, pol
  spawn   c, drop, j
  free    j
  joinv   c
  addi    i, i, 1
  jmp     l
sl:
  const   per, 7000000000
  intr    j, time.periodic, per, pol
  const   d, 60000000000
  intr    _, time.sleep, d
  ret
.end
.func drop(j:ref) -> void
  yield
  free    j
  ret
.end`)
	e := m.Engine()
	task, err := m.Spawn(nil, p, "share", vmloop.I64(2000))
	require.NoError(t, err)
	// The loop has ended once the last job, of a 7 s period, is listed;
	// it is the only one left.
	require.Eventually(t, func() bool {
		js := e.Jobs()
		return len(js) > 0 && js[len(js)-1].Period() == 7*time.Second
	}, 20*time.Second, time.Millisecond)
	js := e.Jobs()
	require.Len(t, js, 1, "jobs whose every handle was freed stay listed")
	require.NoError(t, m.Cancel(task))
	testkit.Await(t, task)
	require.Empty(t, e.Jobs())
	waitTimers(t, e)
}
