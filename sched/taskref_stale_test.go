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

// staleCopiesProg keeps a copy of a task reference where FREE does not
// reach it (an array element, a map value, a register), frees the
// reference and spawns another child, whose reference takes the freed
// slot a generation on; each function then uses the stale copy: joined,
// cancelled, sent on a channel, passed to a spawn (inside an array), or
// added to a select. Every use must trap as a stale handle and never
// reach the second child (whose value, 2, a join would return).
const staleCopiesProg = `
.abi 1.6
.func child(v:i64) -> i64
  ret     v
.end
.func take(arr:ref) -> i64
  .local t:ref, r:i64, k:i64
  const   k, 0
  agetr   t, arr, k
  joini   r, t
  ret     r
.end
.func arrjoin() -> i64
  .local a:ref, b:ref, arr:ref, t:ref, one:i64, two:i64, k:i64, r:i64
  const   one, 1
  const   two, 2
  const   k, 0
  spawn   a, child, one
  anew    arr, one, ref
  asetr   arr, k, a
  joini   r, a
  free    a
  spawn   b, child, two
  agetr   t, arr, k
  joini   r, t
  ret     r
.end
.func arrspawn() -> i64
  .local a:ref, b:ref, arr:ref, j:ref, one:i64, two:i64, k:i64, r:i64
  const   one, 1
  const   two, 2
  const   k, 0
  spawn   a, child, one
  anew    arr, one, ref
  asetr   arr, k, a
  joini   r, a
  free    a
  spawn   b, child, two
  spawn   j, take, arr
  joini   r, j
  ret     r
.end
.func mapjoin() -> i64
  .local a:ref, b:ref, m:ref, t:ref, one:i64, two:i64, k:i64, r:i64
  const   one, 1
  const   two, 2
  const   k, 5
  intr    m, map.new_i64_ref
  spawn   a, child, one
  intr    _, map.iput_ref, m, k, a
  joini   r, a
  free    a
  spawn   b, child, two
  intr    t, map.iget_ref, m, k
  joini   r, t
  ret     r
.end
.func regcancel() -> i64
  .local a:ref, b:ref, c:ref, one:i64, two:i64, r:i64
  const   one, 1
  const   two, 2
  spawn   a, child, one
  movr    c, a
  free    a
  spawn   b, child, two
  cancel  c
  joini   r, b
  ret     r
.end
.func chansend() -> i64
  .local a:ref, b:ref, c:ref, ch:ref, one:i64, two:i64, r:i64
  const   one, 1
  const   two, 2
  intr    ch, chan.new_ref, one
  spawn   a, child, one
  movr    c, a
  free    a
  spawn   b, child, two
  intr    _, chan.send_ref, ch, c
  intr    c, chan.recv_ref, ch
  joini   r, c
  ret     r
.end
.func seljoin() -> i64
  .local a:ref, b:ref, c:ref, x:ref, one:i64, two:i64, r:i64
  const   one, 1
  const   two, 2
  spawn   a, child, one
  movr    c, a
  free    a
  spawn   b, child, two
  intr    x, sel.new
  intr    _, sel.join, x, c
  const   r, -1
  intr    r, sel.wait, x, r
  ret     r
.end
.func freetwice() -> i64
  .local a:ref, b:ref, c:ref, one:i64, two:i64, r:i64
  const   one, 1
  const   two, 2
  spawn   a, child, one
  movr    c, a
  free    a
  spawn   b, child, two
  free    c
  joini   r, b
  ret     r
.end`

// TestTaskRefStaleCopies: a stale copy of a task reference (an array
// element, a map value, a register copy) traps at every use, on both
// loops and 1, 2 and 4 workers, and the engine's budget balances after.
func TestTaskRefStaleCopies(t *testing.T) {
	for _, goLoop := range []bool{false, true} {
		for _, w := range []int{1, 2, 4} {
			rt := testkit.Runtime(t, jade.Options{Workers: w, GoLoop: goLoop, Limits: sched.ResourceLimits{MemoryBytes: 64 << 20}})
			p := testkit.Load(t, rt, staleCopiesProg)
			for _, fn := range []string{"arrjoin", "arrspawn", "mapjoin", "regcancel", "chansend", "seljoin", "freetwice"} {
				for range 20 {
					o := testkit.Run(t, rt, p, fn)
					require.Equal(t, sched.Trapped, o.Kind, "%s (go loop %v, %d workers): %v", fn, goLoop, w, o)
					require.Equal(t, vmloop.TrapHandle, o.Trap.Code, "%s: %v", fn, o)
					require.Contains(t, o.Trap.Msg, "stale task reference", fn)
				}
			}
			e := rt.Main()
			testkit.WaitFor(t, func() bool {
				return hostbus.Scheduler(rt).LiveTasks() == 0 && e.LiveTasks() == 0 && e.MemoryBytes() == 0
			}, func() string { return "memory not given back" })
		}
	}
}

// retireProg spawns and frees n children through one register, each
// reference taking the slot the last one freed, a generation on, so that
// the slot passes its last generation and is retired; the first
// reference, kept in an array, then names a slot that may be held again
// for the last child: joining it must trap, never return that child's
// value.
const retireProg = `
.func child(v:i64) -> i64
  ret     v
.end
.func main(n:i64) -> i64
  .local a:ref, arr:ref, t:ref, i:i64, k:i64, one:i64, r:i64
  const   one, 1
  const   k, 0
  anew    arr, one, ref
  const   i, 0
  spawn   a, child, i
  asetr   arr, k, a
loop:
  joini   r, a
  free    a
  addi    i, i, 1
  spawn   a, child, i
  jlt     i, n, loop
  agetr   t, arr, k
  joini   r, t
  ret     r
.end`

// TestTaskRefSlotRetired: a slot used for 2^16+ references in a row is
// retired, and a reference from its first generation stays stale, on both
// loops; the runtime leaves no slot taken once closed.
func TestTaskRefSlotRetired(t *testing.T) {
	for _, goLoop := range []bool{false, true} {
		before := vmloop.TaskRefSlotsTaken()
		rt, err := jade.New(jade.Options{Workers: 1, GoLoop: goLoop})
		require.NoError(t, err)
		p := testkit.Load(t, rt, retireProg)
		for _, n := range []int64{1 << 16, 1<<16 + 3} {
			o := testkit.Run(t, rt, p, "main", vmloop.I64(n))
			require.Equal(t, sched.Trapped, o.Kind, "n=%d (go loop %v): %v", n, goLoop, o)
			require.Contains(t, o.Trap.Msg, "stale task reference")
		}
		require.NoError(t, rt.Close(t.Context()))
		require.Equal(t, before, vmloop.TaskRefSlotsTaken())
	}
}

// cancelCopyProg: a copy of a running task's reference, received on a
// channel, cancels it and waits for it in a select; the spawner's own
// reference then sees it Cancelled (outcome 3), and so does the copy.
const cancelCopyProg = `
.abi 1.6
.func spin(n:i64) -> i64
  .local i:i64
  const   i, 0
loop:
  jge     i, n, done
  addi    i, i, 1
  jmp     loop
done:
  ret     i
.end
.func canceller(q:ref) -> i64
  .local t:ref, x:ref, r:i64
  intr    t, chan.recv_ref, q
  cancel  t
  intr    x, sel.new
  intr    _, sel.join, x, t
  const   r, -1
  intr    r, sel.wait, x, r
  outcome r, t
  free    t
  ret     r
.end
.func main() -> i64
  .local q:ref, s:ref, c:ref, one:i64, big:i64, r:i64, k:i64
  const   one, 1
  const   big, 1000000000000
  intr    q, chan.new_ref, one
  spawn   s, spin, big
  spawn   c, canceller, q
  intr    _, chan.send_ref, q, s
  outcome r, s
  joini   k, c
  muli    r, r, 10
  add     r, r, k
  ret     r
.end`

// TestTaskRefCancelThroughCopy: cancel and sel.join through a copy of a
// running task's reference reach that task, on both loops and 1, 2 and 4
// workers; the budget balances.
func TestTaskRefCancelThroughCopy(t *testing.T) {
	for _, goLoop := range []bool{false, true} {
		for _, w := range []int{1, 2, 4} {
			rt := testkit.Runtime(t, jade.Options{Workers: w, GoLoop: goLoop, Limits: sched.ResourceLimits{MemoryBytes: 64 << 20}})
			p := testkit.Load(t, rt, cancelCopyProg)
			for range 10 {
				o := testkit.Run(t, rt, p, "main")
				require.Equal(t, sched.Success, o.Kind, "%v", o)
				require.Equal(t, int64(33), o.Value.Int(), "go loop %v, %d workers", goLoop, w)
			}
			e := rt.Main()
			testkit.WaitFor(t, func() bool {
				return hostbus.Scheduler(rt).LiveTasks() == 0 && e.LiveTasks() == 0 && e.MemoryBytes() == 0
			})
		}
	}
}
