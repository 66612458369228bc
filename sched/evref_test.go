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

// staleEventProg frees an event reference and uses a copy of it (a
// register move) afterwards, once its slot names something else (an
// event, then a task, made after the free): every use must trap as a
// stale handle and never reach what the slot names now.
const staleEventProg = `
.abi 1.6
.func wait(d:i64) -> i64
  .local e:ref, c:ref, f:ref
  evnew    e
  movr     c, e
  free     e
  evnew    f
  evwait   c
  ret      d
.end
.func signal(d:i64) -> i64
  .local e:ref, c:ref, t:ref
  evnew    e
  movr     c, e
  free     e
  spawn    t, child, d
  evsignal c
  ret      d
.end
.func broadcast(d:i64) -> i64
  .local e:ref, c:ref
  evnew    e
  movr     c, e
  free     e
  evbcast  c
  ret      d
.end
.func select(d:i64) -> i64
  .local e:ref, c:ref, x:ref, k:i64
  evnew    e
  movr     c, e
  free     e
  intr     x, sel.new
  intr     k, sel.event, x, c
  ret      d
.end
.func copy(d:i64) -> i64
  .local e:ref, c:ref, t:ref
  evnew    e
  movr     c, e
  free     e
  spawn    t, child, d
  spawn    t, holder, c
  ret      d
.end
.func holder(e:ref) -> i64
  .local z:i64
  const    z, 0
  ret      z
.end
.func child(v:i64) -> i64
  ret      v
.end`

// TestEventRefStaleAfterFree: an event reference freed is stale for
// event.wait, event.signal, event.broadcast, sel.event and a copy (a
// spawn's argument), also once its slot names another event or a task
// (the generation check), on both loops.
func TestEventRefStaleAfterFree(t *testing.T) {
	for _, goLoop := range []bool{false, true} {
		rt := testkit.Runtime(t, jade.Options{Workers: 1, GoLoop: goLoop})
		p := testkit.Load(t, rt, staleEventProg)
		for _, fn := range []string{"wait", "signal", "broadcast", "select", "copy"} {
			o := testkit.Run(t, rt, p, fn, vmloop.I64(0))
			require.Equal(t, sched.Trapped, o.Kind, "%s (go loop %v): %v", fn, goLoop, o)
			require.Equal(t, vmloop.TrapHandle, o.Trap.Code, "%s: %v", fn, o)
			require.Contains(t, o.Trap.Msg, "stale event reference", fn)
		}
	}
}

// kindProg uses a task reference as an event and an event reference as
// a task.
const kindProg = `
.abi 1.6
.func taskAsEvent(d:i64) -> i64
  .local t:ref
  spawn    t, child, d
  evsignal t
  ret      d
.end
.func taskInSelect(d:i64) -> i64
  .local t:ref, x:ref, k:i64
  spawn    t, child, d
  intr     x, sel.new
  intr     k, sel.event, x, t
  ret      d
.end
.func eventAsTask(d:i64) -> i64
  .local e:ref, r:i64
  evnew    e
  joini    r, e
  ret      r
.end
.func eventCancelled(d:i64) -> i64
  .local e:ref
  evnew    e
  cancel   e
  ret      d
.end
.func eventAsString(d:i64) -> i64
  .local e:ref, n:i64
  evnew    e
  slen     n, e
  ret      n
.end
.func child(v:i64) -> i64
  ret      v
.end`

// TestEventRefKindConfusion: a task reference is no event and an event
// reference no task (nor a string): each use traps as a handle of the
// wrong kind.
func TestEventRefKindConfusion(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	p := testkit.Load(t, rt, kindProg)
	for fn, msg := range map[string]string{
		"taskAsEvent":    "wrong kind: want event got task",
		"taskInSelect":   "wrong kind: want event got task",
		"eventAsTask":    "wrong kind: want task got event",
		"eventCancelled": "wrong kind: want task got event",
		"eventAsString":  "wrong kind: want string got event",
	} {
		o := testkit.Run(t, rt, p, fn, vmloop.I64(0))
		require.Equal(t, sched.Trapped, o.Kind, "%s: %v", fn, o)
		require.Equal(t, vmloop.TrapHandle, o.Trap.Code, "%s: %v", fn, o)
		require.Contains(t, o.Trap.Msg, msg, fn)
	}
}

// eventCopiesProg hands an event to other tasks in every way a reference
// crosses heaps — an array and a map value passed to a spawn, a channel
// message, a spawn's argument, a joined result — frees its own copies
// where it can, and waits for the receiver's signal through its own (and
// once through a select). main returns how many hand-offs came back.
const eventCopiesProg = `
.abi 1.6
.func viaArray(arr:ref) -> i64
  .local e:ref, k:i64, z:i64
  const    k, 0
  agetr    e, arr, k
  free     arr
  evsignal e
  const    z, 1
  ret      z
.end
.func viaMap(m:ref) -> i64
  .local e:ref, k:i64, z:i64
  const    k, 3
  intr     e, map.iget_ref, m, k
  free     m
  evsignal e
  free     e
  const    z, 1
  ret      z
.end
.func viaChan(ch:ref) -> i64
  .local e:ref, z:i64
  intr     e, chan.recv_ref, ch
  evsignal e
  free     e
  const    z, 1
  ret      z
.end
.func viaArg(e:ref) -> i64
  .local z:i64
  evsignal e
  const    z, 1
  ret      z
.end
.func maker() -> ref
  .local e:ref
  evnew    e
  ret      e
.end
.func waiter(e:ref) -> i64
  .local z:i64
  evwait   e
  const    z, 1
  ret      z
.end
.func main(n:i64) -> i64
  .local e:ref, arr:ref, m:ref, ch:ref, j:ref, x:ref, f:ref, i:i64, k:i64, one:i64, r:i64, s:i64
  const    one, 1
  const    s, 0
  const    i, 0
  intr     ch, chan.new_ref, one
loop:
  jge      i, n, done
  evnew    e
  anew     arr, one, ref
  const    k, 0
  asetr    arr, k, e
  spawn    j, viaArray, arr
  free     arr
  evwait   e
  joini    r, j
  add      s, s, r
  intr     m, map.new_i64_ref
  const    k, 3
  intr     _, map.iput_ref, m, k, e
  spawn    j, viaMap, m
  free     m
  evwait   e
  joini    r, j
  add      s, s, r
  spawn    j, viaChan, ch
  intr     _, chan.send_ref, ch, e
  evwait   e
  joini    r, j
  add      s, s, r
  spawn    j, viaArg, e
  intr     x, sel.new
  intr     _, sel.event, x, e
  const    k, -1
  intr     k, sel.wait, x, k
  free     x
  joini    r, j
  add      s, s, r
  free     e
  spawn    j, maker
  joinr    f, j
  spawn    j, waiter, f
  evsignal f
  free     f
  joini    r, j
  add      s, s, r
  addi     i, i, 1
  jmp      loop
done:
  ret      s
.end`

// TestEventRefCopies: an event reference copied into an array, a map
// value, a channel message, a spawn's argument and a joined result is
// its receiver's own (usable after the sender freed its own); the
// engine's memory goes back to 0, and, the runtime closed, no slot of
// the shared reference table stays taken, on both loops and 1 and 2
// workers.
func TestEventRefCopies(t *testing.T) {
	const n = 200
	for _, goLoop := range []bool{false, true} {
		for _, w := range []int{1, 2} {
			t.Run(fmt.Sprintf("goloop=%v/workers=%d", goLoop, w), func(t *testing.T) {
				before := vmloop.TaskRefSlotsTaken()
				rt, err := jade.New(jade.Options{Workers: w, GoLoop: goLoop, Limits: sched.ResourceLimits{MemoryBytes: 64 << 20}})
				require.NoError(t, err)
				p := testkit.Load(t, rt, eventCopiesProg)
				for range 3 {
					o := testkit.Run(t, rt, p, "main", vmloop.I64(n))
					require.Equal(t, sched.Success, o.Kind, "%v", o)
					require.Equal(t, int64(5*n), o.Value.Int())
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

// TestEventRefResultToHost: an event a task returns reaches the host as
// an event value it can signal (Value export), and one the host passes
// in is the task's own reference.
func TestEventRefResultToHost(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	p := testkit.Load(t, rt, eventCopiesProg)
	o := testkit.Run(t, rt, p, "maker")
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.Equal(t, vmloop.KindEvent, o.Value.Kind())
	require.Equal(t, 32, o.Value.Size(), "an event's size, as an event object's")
	task, err := rt.Spawn(p, "waiter", o.Value)
	require.NoError(t, err)
	testkit.WaitFor(t, func() bool { return hostbus.Scheduler(rt).WaitingTasks() == 1 })
	require.NoError(t, rt.Signal(o.Value))
	w, err := task.Wait(t.Context())
	require.NoError(t, err)
	require.Equal(t, sched.Success, w.Kind, "%v", w)
}
