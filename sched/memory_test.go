package sched_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// memoryProg spawns n children that allocate, recurse (growing their
// stacks), and return arrays, strings or thrown errors; half are joined
// (their results are copied into main's heap), the others are left, and
// their handles are freed, so that their outcomes go with the last
// reference to them.
const memoryProg = `
.func main(n:i64) -> i64
  .local i:i64, t:ref, ts:ref, r:ref, e:ref, two:i64, m:i64, sum:i64
  const   two, 2
  anew    ts, n, ref
  const   i, 0
spawn:
  jge     i, n, joins
  spawn   t, child, i
  asetr   ts, i, t
  addi    i, i, 1
  jmp     spawn
joins:
  const   i, 0
  const   sum, 0
join:
  jge     i, n, done
  agetr   t, ts, i
  rem     m, i, two
  jnei    m, 0, skip
  .try    b, x, h, e
b:
  joinr   r, t
x:
  addi    sum, sum, 1
  free    r
  jmp     skip
h:
  free    e
skip:
  free    t
  addi    i, i, 1
  jmp     join
done:
  ret     sum
.end

.func child(i:i64) -> ref
  .local n:i64, a:ref, d:i64, z:i64, k:i64, s:ref
  const   n, 1000
  anew    a, n, i64
  const   d, 200
  call    z, deep, d
  const   k, 3
  rem     k, i, k
  jeqi    k, 0, str
  jeqi    k, 1, thr
  ret     a
str:
  const   s, "a string result"
  ret     s
thr:
  const   s, "thrown"
  newerr  s, s
  throw   s
.end

.func deep(d:i64) -> i64
  .local r:i64, d1:i64
  .regs 40
  jgti    d, 0, more
  const   r, 0
  ret     r
more:
  subi    d1, d, 1
  call    r, deep, d1
  ret     r
.end`

// TestMemoryBudgetBalances: everything the engine's tasks took from its
// memory budget (task shares, heap grants, stacks, outcomes kept for
// joiners, copies) is given back once they have ended and nothing names
// them, for every worker count.
func TestMemoryBudgetBalances(t *testing.T) {
	testkit.Workers(t, []int{1, 2, 4}, func(t *testing.T, w int) {
		rt := testkit.Runtime(t, jade.Options{Workers: w})
		p := testkit.Load(t, rt, memoryProg)
		e := hostbus.Member(rt).Engine()
		for range 3 {
			o := testkit.Run(t, rt, p, "main", vmloop.I64(300))
			require.Equal(t, sched.Success, o.Kind, "workers=%d: %v", w, o)
			// A task leaves the registry before it gives back its live
			// place and, at its record's last reference, its outcome's
			// bytes: wait for all three; a leak fails the wait.
			testkit.WaitFor(t, func() bool {
				return hostbus.Scheduler(rt).LiveTasks() == 0 && e.LiveTasks() == 0 && e.MemoryBytes() == 0
			})
		}
	})
}

// TestMemoryLimitRefusesSpawn: with a small memoryBytes limit, a spawn that
// does not fit is a catchable ResourceError naming the limit, and an
// allocation that does not fit traps its task; the budget balances after.
func TestMemoryLimitRefusesSpawn(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 2, Limits: sched.ResourceLimits{MemoryBytes: 1 << 20}})
	p := testkit.Load(t, rt, `
.func main() -> ref
  .local t:ref, e:ref, s:ref
  .try    b, x, h, e
b:
  spawn   t, nap
  jmp     b
x:
h:
  errkind s, e
  ret     s
.end
.func nap() -> i64
  .local z:i64
  const   z, 200000000
  intr    _, time.sleep, z
  ret     z
.end`)
	o := testkit.Run(t, rt, p, "main")
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.Equal(t, vmloop.ErrKindResource, o.Value.String())

	// The children hold the budget until they end (the spawner's
	// references to them take none of it): the next spawn waits for them.
	testkit.WaitFor(t, func() bool { return hostbus.Scheduler(rt).LiveTasks() == 0 })

	big := testkit.Load(t, rt, `
.func main() -> i64
  .local n:i64, a:ref
  const   n, 200000
  anew    a, n, i64
  const   n, 0
  ret     n
.end`)
	o = testkit.Run(t, rt, big, "main")
	require.Equal(t, sched.Trapped, o.Kind, "%v", o)
	require.Contains(t, o.Trap.Msg, "exceeds the engine's memory limit")
	// As in TestMemoryBudgetBalances: the registry count drops before the
	// live place and the outcome's bytes come back; a leak fails the wait.
	e := hostbus.Member(rt).Engine()
	testkit.WaitFor(t, func() bool { return hostbus.Scheduler(rt).LiveTasks() == 0 && e.MemoryBytes() == 0 })
}
