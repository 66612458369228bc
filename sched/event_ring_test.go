package sched_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// TestRingMixesWaits passes one token round a ring of tasks, each waiting
// on its own event and signalling the next one's. A task's event waits
// alternate between the ones the VM loop answers and ones a time.timeout
// bounds (requests the dispatcher answers and resumes), and each round
// joins a child's value under a timeout (a request that parks and is
// resumed with the value), so a wait armed in the loop that leaked its
// void resume into a later request would trap or give a wrong value, and
// a lost wake would hang. Every task ends exactly once.
func TestRingMixesWaits(t *testing.T) {
	testkit.Workers(t, []int{1, 2, 4, 8}, func(t *testing.T, workers int) {
		rt := testkit.Runtime(t, jade.Options{Workers: workers, ReductionLimit: 200})
		p := testkit.Load(t, rt, `
.func main(k:i64, rounds:i64) -> i64
  .local i:i64, j:i64, evs:ref, ts:ref, in:ref, out:ref, t:ref, v:i64, sum:i64
  anew  evs, k, ref
  anew  ts, k, ref
  const i, 0
mk:
  jge   i, k, sp0
  evnew in
  asetr evs, i, in
  addi  i, i, 1
  jmp   mk
sp0:
  const i, 0
sp:
  jge   i, k, go
  agetr in, evs, i
  addi  j, i, 1
  jlt   j, k, wrap
  const j, 0
wrap:
  agetr out, evs, j
  spawn t, link, in, out, rounds
  asetr ts, i, t
  addi  i, i, 1
  jmp   sp
go:
  const i, 0
  agetr in, evs, i
  evsignal in
  const sum, 0
jl:
  jge   i, k, done
  agetr t, ts, i
  joini v, t
  add   sum, sum, v
  addi  i, i, 1
  jmp   jl
done:
  ret   sum
.end
.func link(in:ref, out:ref, rounds:i64) -> i64
  .local i:i64, odd:i64, d:i64, c:ref, v:i64, want:i64
  const i, 0
  const d, 60000000000
l:
  jge   i, rounds, end
  andi  odd, i, 1
  jz    odd, plain
  intr  _, time.timeout, d
plain:
  evwait in
  spawn c, twice, i
  intr  _, time.timeout, d
  joini v, c
  muli  want, i, 2
  jne   v, want, bad
  evsignal out
  addi  i, i, 1
  jmp   l
end:
  ret   i
bad:
  const v, -1000000
  ret   v
.end
.func twice(x:i64) -> i64
  .local y:i64
  muli  y, x, 2
  ret   y
.end`)
		k, rounds := int64(16), int64(400)
		if testing.Short() || raceEnabled {
			rounds = 100
		}
		o := testkit.Run(t, rt, p, "main", vmloop.I64(k), vmloop.I64(rounds))
		require.Equal(t, sched.Success, o.Kind, "workers=%d: %v", workers, o)
		require.Equal(t, k*rounds, o.Value.Int(), "workers=%d: every link made every round with the right values", workers)
	})
}
