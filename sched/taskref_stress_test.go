package sched_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// refStressProg hands each child's reference around in every way a
// reference is copied: twice in one array passed to a spawn, as a map
// value passed to a spawn, in a channel message to a consumer; the copies
// are joined twice, cancelled (the child may have ended) and joined
// through a select, freed in different orders. The spawner frees its own
// reference at once. main returns the sum of what the consumer joined.
const refStressProg = `
.abi 1.6
.func child(v:i64) -> i64
  ret     v
.end
.func viaArray(arr:ref) -> i64
  .local x:ref, y:ref, r:i64, s:i64, k:i64
  const   k, 0
  agetr   x, arr, k
  const   k, 1
  agetr   y, arr, k
  free    arr
  joini   r, y
  joini   s, x
  cancel  y
  add     r, r, s
  free    x
  ret     r
.end
.func viaMap(m:ref) -> i64
  .local x:ref, sel:ref, r:i64, k:i64
  const   k, 3
  intr    x, map.iget_ref, m, k
  free    m
  intr    sel, sel.new
  intr    _, sel.join, sel, x
  const   r, -1
  intr    r, sel.wait, sel, r
  cancel  x
  joini   r, x
  ret     r
.end
.func consumer(ch:ref, n:i64) -> i64
  .local t:ref, i:i64, r:i64, s:i64
  const   i, 0
  const   s, 0
loop:
  jge     i, n, done
  intr    t, chan.recv_ref, ch
  joini   r, t
  add     s, s, r
  joini   r, t
  free    t
  addi    i, i, 1
  jmp     loop
done:
  ret     s
.end
.func main(n:i64) -> i64
  .local ch:ref, c:ref, a:ref, arr:ref, m:ref, j1:ref, j2:ref, i:i64, k:i64, two:i64, r:i64, s:i64, cap:i64
  const   cap, 4
  const   two, 2
  intr    ch, chan.new_ref, cap
  spawn   c, consumer, ch, n
  const   i, 0
  const   s, 0
loop:
  jge     i, n, done
  spawn   a, child, i
  anew    arr, two, ref
  const   k, 0
  asetr   arr, k, a
  const   k, 1
  asetr   arr, k, a
  spawn   j1, viaArray, arr
  free    arr
  intr    m, map.new_i64_ref
  const   k, 3
  intr    _, map.iput_ref, m, k, a
  spawn   j2, viaMap, m
  free    m
  intr    _, chan.send_ref, ch, a
  free    a
  joini   r, j1
  add     s, s, r
  joini   r, j2
  add     s, s, r
  free    j1
  free    j2
  addi    i, i, 1
  jmp     loop
done:
  joini   r, c
  add     s, s, r
  ret     s
.end`

// TestTaskRefCopiesStress: refStressProg on both loops and 1, 2 and 4
// workers, several at once: every sum is right, the engine's memory goes
// back to 0, and once the runtime is closed no slot of the task
// reference table it took stays taken: a child that ended before its
// reference went in a channel message (pinned after its end) gives back
// the spare slots its Exec kept (dropLateSlots).
func TestTaskRefCopiesStress(t *testing.T) {
	const n, runs = 60, 6
	for _, goLoop := range []bool{false, true} {
		for _, w := range []int{1, 2, 4} {
			t.Run(fmt.Sprintf("goloop=%v/workers=%d", goLoop, w), func(t *testing.T) {
				before := vmloop.TaskRefSlotsTaken()
				rt, err := jade.New(jade.Options{Workers: w, GoLoop: goLoop, Limits: sched.ResourceLimits{MemoryBytes: 256 << 20}})
				require.NoError(t, err)
				p := testkit.Load(t, rt, refStressProg)
				tasks := make([]*jade.Task, runs)
				for i := range tasks {
					tasks[i], err = rt.Spawn(p, "main", vmloop.I64(n))
					require.NoError(t, err)
				}
				for _, task := range tasks {
					o, err := task.Wait(t.Context())
					require.NoError(t, err)
					require.Equal(t, sched.Success, o.Kind, "%v", o)
					require.Equal(t, int64(2*n*(n-1)), o.Value.Int())
				}
				e := rt.Main()
				testkit.WaitFor(t, func() bool {
					return hostbus.Scheduler(rt).LiveTasks() == 0 && e.LiveTasks() == 0 && e.MemoryBytes() == 0
				}, func() string { return fmt.Sprintf("memory %d, live %d", e.MemoryBytes(), e.LiveTasks()) })
				require.NoError(t, rt.Close(t.Context()))
				require.Equal(t, before, vmloop.TaskRefSlotsTaken(), "slots left taken")
			})
		}
	}
}

// joinResultProg: a task returns an array holding its children's
// references; two joiners (the spawner and a task given a copy of the
// reference) each take the array (a copy of it, with references of
// their own) and join the grandchildren through it.
const joinResultProg = `
.func leaf(v:i64) -> i64
  ret     v
.end
.func mid(v:i64) -> ref
  .local a:ref, b:ref, arr:ref, k:i64, two:i64
  const   two, 2
  anew    arr, two, ref
  spawn   a, leaf, v
  spawn   b, leaf, v
  const   k, 0
  asetr   arr, k, a
  const   k, 1
  asetr   arr, k, b
  ret     arr
.end
.func sum(t:ref) -> i64
  .local arr:ref, x:ref, r:i64, s:i64, k:i64
  joinr   arr, t
  const   k, 0
  agetr   x, arr, k
  joini   s, x
  const   k, 1
  agetr   x, arr, k
  joini   r, x
  add     s, s, r
  ret     s
.end
.func main(n:i64) -> i64
  .local m:ref, j:ref, i:i64, r:i64, s:i64
  const   i, 0
  const   s, 0
loop:
  jge     i, n, done
  spawn   m, mid, i
  spawn   j, sum, m
  call    r, sum, m
  add     s, s, r
  joini   r, j
  add     s, s, r
  free    j
  free    m
  addi    i, i, 1
  jmp     loop
done:
  ret     s
.end`

// TestTaskRefJoinResults: references inside a result are each joiner's
// own; the sums are right on both loops and 1, 2 and 4 workers, the
// budget balances and no slot stays taken once the runtime is closed.
func TestTaskRefJoinResults(t *testing.T) {
	const n = 200
	for _, goLoop := range []bool{false, true} {
		for _, w := range []int{1, 2, 4} {
			before := vmloop.TaskRefSlotsTaken()
			rt, err := jade.New(jade.Options{Workers: w, GoLoop: goLoop, Limits: sched.ResourceLimits{MemoryBytes: 256 << 20}})
			require.NoError(t, err)
			p := testkit.Load(t, rt, joinResultProg)
			o := testkit.Run(t, rt, p, "main", vmloop.I64(n))
			require.Equal(t, sched.Success, o.Kind, "%v", o)
			require.Equal(t, int64(2*n*(n-1)), o.Value.Int())
			e := rt.Main()
			testkit.WaitFor(t, func() bool {
				return hostbus.Scheduler(rt).LiveTasks() == 0 && e.LiveTasks() == 0 && e.MemoryBytes() == 0
			}, func() string { return fmt.Sprintf("memory %d, live %d", e.MemoryBytes(), e.LiveTasks()) })
			require.NoError(t, rt.Close(t.Context()))
			require.Equal(t, before, vmloop.TaskRefSlotsTaken(), "go loop %v, %d workers", goLoop, w)
		}
	}
}

// mapChainProg: main fills a map with n children's references and sends
// it down a chain of relays on channels; each relay joins every child
// through its own copy, frees a few of its references (in another order
// than it got them) and passes the map on; the last relay returns the
// sum of its joins.
const mapChainProg = `
.abi 1.6
.func child(v:i64) -> i64
  ret     v
.end
.func relay(in:ref, out:ref, n:i64, last:i64) -> i64
  .local m:ref, t:ref, i:i64, r:i64, s:i64
  intr    m, chan.recv_ref, in
  const   s, 0
  const   i, 0
loop:
  jge     i, n, sent
  intr    t, map.iget_ref, m, i
  joini   r, t
  add     s, s, r
  addi    i, i, 1
  jmp     loop
sent:
  jnz     last, done
  intr    _, chan.send_ref, out, m
done:
  subi    i, n, 1
  intr    t, map.iget_ref, m, i
  free    t
  ret     s
.end
.func main(n:i64) -> i64
  .local m:ref, a:ref, c1:ref, c2:ref, c3:ref, ra:ref, rb:ref, rc:ref, i:i64, one:i64, zero:i64, r:i64
  const   one, 1
  const   zero, 0
  intr    m, map.new_i64_ref
  const   i, 0
fill:
  jge     i, n, filled
  spawn   a, child, i
  intr    _, map.iput_ref, m, i, a
  addi    i, i, 1
  jmp     fill
filled:
  intr    c1, chan.new_ref, one
  intr    c2, chan.new_ref, one
  intr    c3, chan.new_ref, one
  spawn   ra, relay, c1, c2, n, zero
  spawn   rb, relay, c2, c3, n, zero
  spawn   rc, relay, c3, c1, n, one
  intr    _, chan.send_ref, c1, m
  joini   r, rc
  ret     r
.end`

// TestTaskRefMapChain: references in a map copied from relay to relay
// stay each relay's own (every join succeeds after the earlier holders
// freed theirs or ended); the budget balances and no slot stays taken
// once the runtime is closed, on both loops and 1 and 4 workers.
func TestTaskRefMapChain(t *testing.T) {
	const n = 100
	for _, goLoop := range []bool{false, true} {
		for _, w := range []int{1, 4} {
			before := vmloop.TaskRefSlotsTaken()
			rt, err := jade.New(jade.Options{Workers: w, GoLoop: goLoop, Limits: sched.ResourceLimits{MemoryBytes: 256 << 20}})
			require.NoError(t, err)
			p := testkit.Load(t, rt, mapChainProg)
			for range 10 {
				o := testkit.Run(t, rt, p, "main", vmloop.I64(n))
				require.Equal(t, sched.Success, o.Kind, "%v", o)
				require.Equal(t, int64(n*(n-1)/2), o.Value.Int())
			}
			e := rt.Main()
			testkit.WaitFor(t, func() bool {
				return hostbus.Scheduler(rt).LiveTasks() == 0 && e.LiveTasks() == 0 && e.MemoryBytes() == 0
			}, func() string { return fmt.Sprintf("memory %d, live %d", e.MemoryBytes(), e.LiveTasks()) })
			require.NoError(t, rt.Close(t.Context()))
			require.Equal(t, before, vmloop.TaskRefSlotsTaken(), "go loop %v, %d workers", goLoop, w)
		}
	}
}
