package sched_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// joinsFirst is the runtime's count of joins whose target ran first.
func joinsFirst(rt *jade.Runtime) uint64 {
	var n uint64
	for _, w := range rt.Observe().Metrics().Workers {
		n += w.JoinsFirst
	}
	return n
}

// spawnJoinSrc spawns and joins n children one at a time; each returns
// its argument times two, and main sums what the joins return.
const spawnJoinSrc = `
.func main(n:i64) -> i64
  .local i:i64, t:ref, v:i64, s:i64
  const i, 0
  const s, 0
l:
  jge   i, n, d
  spawn t, child, i
  joini v, t
  free  t
  add   s, s, v
  addi  i, i, 1
  jmp   l
d:
  ret   s
.end
.func child(x:i64) -> i64
  .local y:i64
  add   y, x, x
  ret   y
.end`

// TestJoinRunsTargetFirst: a join of a child that waits to run next on the
// joiner's worker runs the child there and then, and every join returns
// its own child's value, in both loops.
func TestJoinRunsTargetFirst(t *testing.T) {
	for _, goLoop := range []bool{false, true} {
		rt := testkit.Runtime(t, jade.Options{Workers: 1, GoLoop: goLoop})
		p := testkit.Load(t, rt, spawnJoinSrc)
		const n = 2000
		before := joinsFirst(rt)
		o := testkit.Run(t, rt, p, "main", vmloop.I64(n))
		require.Equal(t, sched.Success, o.Kind, "goLoop=%v: %v", goLoop, o)
		require.Equal(t, int64(n*(n-1)), o.Value.Int(), "goLoop=%v", goLoop)
		// Each join but those at a slice's end (too little budget left
		// for a pick from the lifo slot) ran its child first.
		require.Greater(t, joinsFirst(rt)-before, uint64(n*9/10), "goLoop=%v", goLoop)
	}
}

// TestJoinFirstTargetWaits: a target that waits (here for an event the
// host signals later) leaves the join to wait for it as usual; so does a
// target preempted in its slice; and a join inside a target running
// first waits as usual (one level).
func TestJoinFirstTargetWaits(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1, ReductionLimit: 20_000})
	p := testkit.Load(t, rt, `
.func waits(ev:ref) -> i64
  .local t:ref, v:i64
  spawn  t, waiter, ev
  joini  v, t
  ret    v
.end
.func waiter(ev:ref) -> i64
  .local v:i64
  evwait ev
  const  v, 7
  ret    v
.end
.func long(n:i64) -> i64
  .local t:ref, v:i64
  spawn  t, spin, n
  joini  v, t
  ret    v
.end
.func spin(n:i64) -> i64
  .local i:i64
  const i, 0
l:
  jge   i, n, d
  addi  i, i, 1
  jmp   l
d:
  ret   i
.end
.func nested(n:i64) -> i64
  .local t:ref, v:i64
  spawn  t, long, n
  joini  v, t
  ret    v
.end`)
	ev := rt.NewEvent()
	task, err := rt.Spawn(p, "waits", ev)
	require.NoError(t, err)
	testkit.WaitFor(t, func() bool {
		for _, r := range rt.Observe().Tasks() {
			if r.ID == task.ID() && r.State == jade.Waiting {
				return true
			}
		}
		return false
	}, "the joiner waits for its waiting child")
	first := joinsFirst(rt)
	require.NoError(t, rt.Signal(ev))
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Patience)
	defer cancel()
	o, err := task.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(7), o.Value.Int())
	require.Equal(t, uint64(1), first, "the waiting child ran first once")

	o = testkit.Run(t, rt, p, "long", vmloop.I64(200_000)) // ten slices
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.Equal(t, int64(200_000), o.Value.Int())

	before := joinsFirst(rt)
	o = testkit.Run(t, rt, p, "nested", vmloop.I64(10))
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.Equal(t, int64(10), o.Value.Int())
	require.Equal(t, uint64(1), joinsFirst(rt)-before, "only the outer join ran its target first")
}

// TestJoinFirstNotWithATimeout: a join that a one-shot timeout bounds
// waits as before: its target runs from the lifo slot, not at the join.
func TestJoinFirstNotWithATimeout(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	p := testkit.Load(t, rt, `
.func main(n:i64) -> i64
  .local i:i64, t:ref, v:i64, d:i64
  const i, 0
  const d, 1000000000
l:
  jge   i, n, e
  spawn t, child, i
  intr  _, time.timeout, d
  joini v, t
  free  t
  addi  i, i, 1
  jmp   l
e:
  ret   i
.end
.func child(x:i64) -> i64
  ret   x
.end`)
	before := joinsFirst(rt)
	o := testkit.Run(t, rt, p, "main", vmloop.I64(100))
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.Equal(t, before, joinsFirst(rt))
}

// TestJoinFirstNotWhileTracing: the trace records one slice per dispatch,
// so while it is on a join waits and its target is picked as before.
func TestJoinFirstNotWhileTracing(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	p := testkit.Load(t, rt, spawnJoinSrc)
	var buf bytes.Buffer
	require.NoError(t, rt.Observe().StartTrace(&buf))
	before := joinsFirst(rt)
	o := testkit.Run(t, rt, p, "main", vmloop.I64(100))
	require.NoError(t, rt.Observe().StopTrace())
	require.Equal(t, int64(100*99), o.Value.Int())
	require.Equal(t, before, joinsFirst(rt))
}

// TestJoinFirstKeepsTheSliceBound: a task spawning and joining children
// without end at one worker shares it with a task that yields: the
// children run on their joiner's slice, so the chain still yields after
// about one slice (S-6), and the yielding task finishes while the chain
// goes on.
func TestJoinFirstKeepsTheSliceBound(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	p := testkit.Load(t, rt, `
.func chain(n:i64) -> i64
  .local t:ref, v:i64
l:
  spawn t, child, n
  joini v, t
  free  t
  jmp   l
.end
.func child(x:i64) -> i64
  ret   x
.end
.func yielder(n:i64) -> i64
  .local i:i64
  const i, 0
l:
  jge   i, n, d
  yield
  addi  i, i, 1
  jmp   l
d:
  ret   i
.end`)
	chain, err := rt.Spawn(p, "chain", vmloop.I64(1))
	require.NoError(t, err)
	start := time.Now()
	o := testkit.Run(t, rt, p, "yielder", vmloop.I64(200))
	require.Equal(t, int64(200), o.Value.Int())
	t.Logf("200 yields beside a spawn + join chain: %v", time.Since(start))
	_, ended := chain.Outcome()
	require.NoError(t, chain.Cancel())
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Patience)
	defer cancel()
	co, err := chain.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, sched.Cancelled, co.Kind)
	require.False(t, ended, "the chain ran on while the yields ran")
	require.Greater(t, joinsFirst(rt), uint64(0))
}

// waitsTaken is the runtime's count of waits taken in place.
func waitsTaken(rt *jade.Runtime) uint64 {
	var n uint64
	for _, w := range rt.Observe().Metrics().Workers {
		n += w.WaitsTaken
	}
	return n
}

// TestWaitTakenInPlace: a task about to wait runs the task it woke
// first; when that task's run gives it its wake (an event's signal, a
// channel's message) it goes on without parking. Event and channel
// ping-pong, both loops: every round trip arrives, and nearly every wait
// of the first task is taken in place.
func TestWaitTakenInPlace(t *testing.T) {
	for _, goLoop := range []bool{false, true} {
		rt := testkit.Runtime(t, jade.Options{Workers: 1, GoLoop: goLoop})
		p := testkit.Load(t, rt, `
.abi 1.5
.func events(n:i64) -> i64
  .local ping:ref, pong:ref, t:ref, i:i64, v:i64
  evnew ping
  evnew pong
  spawn t, ponger, ping, pong, n
  const i, 0
l:
  jge      i, n, d
  evsignal ping
  evwait   pong
  addi     i, i, 1
  jmp      l
d:
  joini v, t
  add   v, v, i
  ret   v
.end
.func ponger(ping:ref, pong:ref, n:i64) -> i64
  .local i:i64
  const i, 0
l:
  jge      i, n, d
  evwait   ping
  evsignal pong
  addi     i, i, 1
  jmp      l
d:
  ret i
.end
.func chans(n:i64) -> i64
  .local a:ref, b:ref, z:i64, t:ref, i:i64, v:i64, s:i64
  const z, 0
  intr  a, chan.new_i64, z
  intr  b, chan.new_i64, z
  spawn t, echo, a, b, n
  const i, 0
  const s, 0
l:
  jge   i, n, d
  intr  _, chan.send_i64, a, i
  intr  v, chan.recv_i64, b
  add   s, s, v
  addi  i, i, 1
  jmp   l
d:
  joinv t
  ret   s
.end
.func echo(a:ref, b:ref, n:i64) -> void
  .local i:i64, v:i64
  const i, 0
l:
  jge   i, n, d
  intr  v, chan.recv_i64, a
  addi  v, v, 1
  intr  _, chan.send_i64, b, v
  addi  i, i, 1
  jmp   l
d:
  retv
.end`)
		const n = 2000
		before := waitsTaken(rt)
		o := testkit.Run(t, rt, p, "events", vmloop.I64(n))
		require.Equal(t, sched.Success, o.Kind, "goLoop=%v: %v", goLoop, o)
		require.Equal(t, int64(2*n), o.Value.Int())
		require.Greater(t, waitsTaken(rt)-before, uint64(n*3/4), "goLoop=%v: event waits taken in place", goLoop)

		before = waitsTaken(rt)
		o = testkit.Run(t, rt, p, "chans", vmloop.I64(n))
		require.Equal(t, sched.Success, o.Kind, "goLoop=%v: %v", goLoop, o)
		require.Equal(t, int64(n*(n+1)/2), o.Value.Int())
		require.Greater(t, waitsTaken(rt)-before, uint64(n*3/4), "goLoop=%v: channel waits taken in place", goLoop)
	}
}

// TestWaitFirstMissesNoBroadcast: the wait is registered before the task
// in the lifo slot runs, so a broadcast that task makes (an event keeps
// no broadcast) still wakes the waiter, every time. Each run's ten
// rounds fit in its first slice (a preemption between the spawn and the
// wait would let the broadcast come first, with or without running
// first: the program is racy beyond one slice).
func TestWaitFirstMissesNoBroadcast(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	p := testkit.Load(t, rt, `
.func main(n:i64) -> i64
  .local ev:ref, t:ref, i:i64
  const i, 0
l:
  jge     i, n, d
  evnew   ev
  spawn   t, caster, ev
  evwait  ev
  joinv   t
  free    t
  addi    i, i, 1
  jmp     l
d:
  ret     i
.end
.func caster(ev:ref) -> void
  evbcast ev
  retv
.end`)
	before := waitsTaken(rt)
	for range 100 {
		o := testkit.Run(t, rt, p, "main", vmloop.I64(10))
		require.Equal(t, sched.Success, o.Kind, "%v", o)
		require.Equal(t, int64(10), o.Value.Int())
	}
	require.Greater(t, waitsTaken(rt)-before, uint64(900), "the broadcasts were taken in place")
}
