package sched_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// TestTimedOutWaitsLeaveBoundedLists: waits that time out leave their
// token in the event's (or the joined task's) list; those lists stay
// bounded by their live waiters (2 × live, at least 16) however many waits
// time out. They used to keep every stale token until the next signal:
// 20,000 timed-out waits left 20,000 tokens. JADE_WAITLIST_N sets the
// number of timed-out waits per list (default 200,000; the issue's
// figure is 1,000,000).
func TestTimedOutWaitsLeaveBoundedLists(t *testing.T) {
	n := int64(200_000)
	if raceEnabled {
		n = 50_000 // still 3,000× the bound; the detector makes each wait slow
	}
	if s := os.Getenv("JADE_WAITLIST_N"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err)
		n = v
	}
	rt := testkit.Runtime(t, jade.Options{Workers: 2})
	p := testkit.Load(t, rt, `
.abi 1.1
.func ev_loop(ev:ref, n:i64) -> i64
  .local i:i64, z:i64, e:ref
  const i, 0
  const z, 0
l:
  jge i, n, d
  .try b, x, h, e
b:
  intr _, time.timeout, z
  evwait ev
x:
  addi i, i, 1
  jmp l
h:
  free e                      ; the TimeoutError: the task's heap is bounded
  addi i, i, 1
  jmp l
d:
  ret i
.end
.func join_loop(target:ref, n:i64) -> i64
  .local i:i64, z:i64, v:i64, e:ref
  const i, 0
  const z, 0
l:
  jge i, n, d
  .try b, x, h, e
b:
  intr _, time.timeout, z
  joini v, target
x:
  addi i, i, 1
  jmp l
h:
  free e                      ; the TimeoutError: the task's heap is bounded
  addi i, i, 1
  jmp l
d:
  ret i
.end
.func forever(ev:ref) -> i64
  .local z:i64
  evwait ev
  const z, 0
  ret z
.end`)
	ev := rt.NewEvent()
	never := rt.NewEvent()
	// Live waiters that stay: the bound follows them.
	var live []*jade.Task
	for range 5 {
		tk, err := rt.Spawn(p, "forever", ev)
		require.NoError(t, err)
		live = append(live, tk)
	}
	target, err := rt.Spawn(p, "forever", never)
	require.NoError(t, err)
	evLoop, err := rt.Spawn(p, "ev_loop", ev, vmloop.I64(n))
	require.NoError(t, err)
	joinLoop, err := rt.Spawn(p, "join_loop", vmloop.Ext(vmloop.KindTask, hostbus.Task(target)), vmloop.I64(n))
	require.NoError(t, err)
	for _, tk := range []*jade.Task{evLoop, joinLoop} {
		o, err := tk.Wait(context.Background())
		require.NoError(t, err)
		require.Equal(t, sched.Success, o.Kind, "%v", o)
		require.EqualValues(t, n, o.Value.Int())
	}
	evObj := ev.Obj().(*sched.Event)
	require.LessOrEqual(t, sched.EventWaiters(evObj), max(16, 2*(len(live)+1)), "event waiter tokens after %d timed-out waits", n)
	require.LessOrEqual(t, sched.Joiners(hostbus.Task(target)), 16, "joiner tokens after %d timed-out joins", n)
	for _, tk := range append(live, target) {
		tk.Cancel()
		tk.Wait(context.Background())
	}
}
