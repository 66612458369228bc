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

// staleJoinProg spawns a child, frees its reference, spawns a second
// child (whose reference takes the first one's slot, a generation on) and
// joins or cancels through the freed reference: that must trap as a stale
// handle, never reach the second child.
const staleJoinProg = `
.func join(d:i64) -> i64
  .local a:ref, b:ref, r:i64, one:i64, two:i64
  const   one, 1
  const   two, 2
  spawn   a, child, one
  joini   r, a
  free    a
  spawn   b, child, two
  joini   r, a
  ret     r
.end
.func cancel(d:i64) -> i64
  .local a:ref, b:ref, r:i64, one:i64, two:i64
  const   one, 1
  const   two, 2
  spawn   a, child, one
  free    a
  spawn   b, child, two
  cancel  a
  joini   r, b
  ret     r
.end
.func child(v:i64) -> i64
  ret     v
.end`

// TestTaskRefStaleAfterFree: a task reference freed is stale for join
// and cancel even when its slot names another task now (the generation
// check), on both loops.
func TestTaskRefStaleAfterFree(t *testing.T) {
	for _, goLoop := range []bool{false, true} {
		rt := testkit.Runtime(t, jade.Options{Workers: 1, GoLoop: goLoop})
		p := testkit.Load(t, rt, staleJoinProg)
		for _, fn := range []string{"join", "cancel"} {
			o := testkit.Run(t, rt, p, fn, vmloop.I64(0))
			require.Equal(t, sched.Trapped, o.Kind, "%s (go loop %v): %v", fn, goLoop, o)
			require.Equal(t, vmloop.TrapHandle, o.Trap.Code, "%s: %v", fn, o)
			require.Contains(t, o.Trap.Msg, "stale task reference", fn)
		}
	}
}

// copiedRefsProg hands task references to other tasks inside an array
// (a spawn argument) and a channel message, frees its own, and the
// receivers join through their copies: each copy is its holder's own.
const copiedRefsProg = `
.func main() -> i64
  .local a:ref, b:ref, arr:ref, j:ref, ch:ref, one:i64, two:i64, r:i64, s:i64, k:i64
  const   one, 1
  const   two, 2
  const   k, 0
  spawn   a, child, one
  spawn   b, child, two
  anew    arr, two, ref
  asetr   arr, k, a
  asetr   arr, one, b
  spawn   j, joiner, arr
  free    a
  free    b
  free    arr
  joini   s, j
  ret     s
.end
.func joiner(arr:ref) -> i64
  .local t:ref, i:i64, n:i64, r:i64, s:i64
  alen    n, arr
  const   i, 0
  const   s, 0
loop:
  jge     i, n, done
  agetr   t, arr, i
  joini   r, t
  add     s, s, r
  addi    i, i, 1
  jmp     loop
done:
  ret     s
.end
.func child(v:i64) -> i64
  ret     v
.end`

// TestTaskRefCopies: task references copied out of a heap (inside an array
// passed to a spawn) stay joinable by the receiver after the spawner
// freed its own; the records are reused only when every holder let go,
// and the budget balances.
func TestTaskRefCopies(t *testing.T) {
	for _, w := range []int{1, 2} {
		rt := testkit.Runtime(t, jade.Options{Workers: w, Limits: sched.ResourceLimits{MemoryBytes: 64 << 20}})
		p := testkit.Load(t, rt, copiedRefsProg)
		e := rt.Main()
		for range 50 {
			o := testkit.Run(t, rt, p, "main")
			require.Equal(t, sched.Success, o.Kind, "workers=%d: %v", w, o)
			require.Equal(t, int64(3), o.Value.Int())
		}
		testkit.WaitFor(t, func() bool {
			return hostbus.Scheduler(rt).LiveTasks() == 0 && e.LiveTasks() == 0 && e.MemoryBytes() == 0
		})
	}
}

// chanRefsProg sends a task reference through a channel and frees its
// own; the receiver joins the child and a select joins a second one.
const chanRefsProg = `
.abi 1.6
.func main() -> i64
  .local ch:ref, a:ref, b:ref, r:ref, one:i64, two:i64, s:i64, x:ref, k:i64
  const   one, 1
  const   two, 2
  intr    ch, chan.new_ref, one
  spawn   r, receiver, ch
  spawn   a, child, one
  intr    _, chan.send_ref, ch, a
  free    a
  joini   s, r
  spawn   b, child, two
  intr    x, sel.new
  intr    _, sel.join, x, b
  const   k, -1
  intr    k, sel.wait, x, k
  joini   k, b
  add     s, s, k
  ret     s
.end
.func receiver(ch:ref) -> i64
  .local t:ref, r:i64
  intr    t, chan.recv_ref, ch
  joini   r, t
  free    t
  ret     r
.end
.func child(v:i64) -> i64
  ret     v
.end`

// TestTaskRefChannel: a task reference sent on a channel is the
// receiver's own (joinable after the sender freed its own), and a select
// joins a task through its reference.
func TestTaskRefChannel(t *testing.T) {
	for _, w := range []int{1, 2} {
		rt := testkit.Runtime(t, jade.Options{Workers: w, Limits: sched.ResourceLimits{MemoryBytes: 64 << 20}})
		p := testkit.Load(t, rt, chanRefsProg)
		e := rt.Main()
		for range 50 {
			o := testkit.Run(t, rt, p, "main")
			require.Equal(t, sched.Success, o.Kind, "workers=%d: %v", w, o)
			require.Equal(t, int64(3), o.Value.Int())
		}
		testkit.WaitFor(t, func() bool {
			return hostbus.Scheduler(rt).LiveTasks() == 0 && e.LiveTasks() == 0 && e.MemoryBytes() == 0
		})
	}
}

// TestSpawnRefsBalance: a spawn's reference (overwritten by the next
// spawn, never freed) counts once in its child's record (PrepareSpawn
// counts it, vmloop.Exec.CompleteTask makes it uncounted), and goes with
// the spawner's heap: every record is reused once both ended, and the
// budget balances. (A detached spawn makes none: detached_test.go.)
func TestSpawnRefsBalance(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1, Limits: sched.ResourceLimits{MemoryBytes: 64 << 20}})
	p := testkit.Load(t, rt, `
.func main(n:i64) -> i64
  .local i:i64, one:i64, t:ref
  const   one, 1
  const   i, 0
loop:
  jge     i, n, done
  spawn   t, child, one
  addi    i, i, 1
  jmp     loop
done:
  ret     i
.end
.func child(v:i64) -> i64
  ret     v
.end`)
	e := hostbus.Member(rt).Engine()
	made := sched.TaskRecordsMade()
	for range 20 {
		o := testkit.Run(t, rt, p, "main", vmloop.I64(100))
		require.Equal(t, sched.Success, o.Kind, "%v", o)
	}
	testkit.WaitFor(t, func() bool {
		return hostbus.Scheduler(rt).LiveTasks() == 0 && e.LiveTasks() == 0 && e.MemoryBytes() == 0
	})
	require.Less(t, sched.TaskRecordsMade()-made, uint64(1000), "the records are reused")
}

// TestTaskRefSlotsGoBack: a runtime that ended leaves no slot of the task
// reference table taken, whatever its recycled records kept spare
// (worker caches, the spares, taskPool).
func TestTaskRefSlotsGoBack(t *testing.T) {
	before := vmloop.TaskRefSlotsTaken()
	rt, err := jade.New(jade.Options{Workers: 2})
	require.NoError(t, err)
	p := testkit.Load(t, rt, copiedRefsProg)
	for range 200 {
		o := testkit.Run(t, rt, p, "main")
		require.Equal(t, sched.Success, o.Kind, "%v", o)
	}
	o := testkit.RunFanout(t, rt, testkit.Load(t, rt, testkit.Fanout), 3000)
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	// A chain: each link holds its child's reference until it returns,
	// and ends before its child, whose record its own end recycles on a
	// worker with the spare slot its Exec keeps.
	chain := testkit.Load(t, rt, `
.func link(n:i64) -> i64
  .local c:ref, m:i64
  jeqi    n, 0, done
  subi    m, n, 1
  spawn   c, link, m
done:
  ret     n
.end`)
	o = testkit.Run(t, rt, chain, "link", vmloop.I64(2000))
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	testkit.WaitFor(t, func() bool { return hostbus.Scheduler(rt).LiveTasks() == 0 })
	require.Greater(t, vmloop.TaskRefSlotsTaken(), before, "spare slots kept by recycled records")
	require.NoError(t, rt.Close(t.Context()))
	require.Equal(t, before, vmloop.TaskRefSlotsTaken())
}
