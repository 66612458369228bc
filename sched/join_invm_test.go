package sched

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/timerwheel"
	"github.com/jadevm/jade/vmloop"
)

// joinDispatcher answers joins of inline results as the bus does (a
// parked join resumed with the target's result), spawns as
// spawnDispatcher does and anything else with no value, recording each
// request it gets.
type joinDispatcher struct {
	spawnDispatcher
	mu      sync.Mutex
	resumed []string
}

func (d *joinDispatcher) Intrinsic(t *Task, req *vmloop.Request) Action {
	switch req.Op {
	case vmloop.JOINI, vmloop.JOINF, vmloop.JOINV:
	default:
		return d.spawnDispatcher.Intrinsic(t, req)
	}
	d.spawnDispatcher.mu.Lock()
	d.seen = append(d.seen, req.Intr.Name)
	d.spawnDispatcher.mu.Unlock()
	obj, err := t.ex().ArgObj(0, vmloop.KindTask)
	if err != nil {
		t.ex().SetTrapErr(err)
		return ActTrapped
	}
	if !d.c.AwaitTask(t, obj.(*Task)) {
		return ActSuspend
	}
	return d.complete(t, req, obj.(*Task))
}

func (d *joinDispatcher) Resume(t *Task, req *vmloop.Request) Action {
	d.mu.Lock()
	d.resumed = append(d.resumed, req.Intr.Name)
	d.mu.Unlock()
	obj, err := t.ex().ArgObj(0, vmloop.KindTask)
	if err != nil {
		t.ex().SetTrapErr(err)
		return ActTrapped
	}
	return d.complete(t, req, obj.(*Task))
}

// complete gives the join target's result (or throws its failure as an
// error value).
func (d *joinDispatcher) complete(t *Task, req *vmloop.Request, target *Task) Action {
	ex := t.ex()
	k, bits, ok := target.InlineOutcome()
	var err error
	switch {
	case !ok:
		if ex.Raise(vmloop.Err(vmloop.ErrKindTask, "not an inline result")) {
			return ActContinue
		}
		if ex.Trap().Code != vmloop.TrapNone {
			return ActTrapped
		}
		return ActThrown
	case req.Op == vmloop.JOINV:
		err = ex.CompleteVoid()
	default:
		err = ex.CompleteScalar(k, bits)
	}
	if err != nil {
		ex.SetTrapErr(err)
		return ActTrapped
	}
	return ActContinue
}

// TestJoinAnsweredInVM: a join (joini, joinf, joinv) from a task of a
// target that has completed with a void, i64 or f64 result, or that
// waits in the worker's lifo slot and completes in a run first, is
// answered in the VM loop: no request reaches the dispatcher (but where
// a run first is refused, as for a request), the value is the target's,
// and each join costs what its request would. A join
// of a target that is not done (parked), of one that threw, and one that
// time.timeout bounds are requests; a join whose destination does not
// take the result traps, as the request's answer does.
func TestJoinAnsweredInVM(t *testing.T) {
	const src = `.func sum(n:i64) -> i64
  .local i:i64, c:ref, v:i64, s:i64, f:f64, g:f64
  const i, 0
  const s, 0
loop:
  jge   i, n, done
  spawn c, seven, i
  joini v, c
  add   s, s, v
  joini v, c
  add   s, s, v
  joinv c
  free  c
  spawn c, half
  joinf f, c
  ftoi  v, f
  add   s, s, v
  free  c
  addi  i, i, 1
  jmp   loop
done:
  ret   s
.end
.func seven(i:i64) -> i64
  .local r:i64
  addi  r, i, 7
  ret   r
.end
.func half() -> f64
  .local h:f64
  ldf   h, 2.5
  ret   h
.end
.func rejoin(n:i64) -> i64
  .local i:i64, c:ref, v:i64
  const i, 0
  const v, 0
  spawn c, seven, i
loop:
  jge   i, n, done
  joini v, c
  addi  i, i, 1
  jmp   loop
done:
  ret   v
.end
.func busy(n:i64) -> i64
  .local c:ref, v:i64
  spawn c, spin, n
  joini v, c
  ret   v
.end
.func spin(n:i64) -> i64
  .local i:i64
  const i, 0
loop:
  jge   i, n, done
  addi  i, i, 1
  jmp   loop
done:
  ret   i
.end
.func parked(ev:ref) -> i64
  .local a:ref, b:ref, v:i64
  spawn a, waits, ev
  spawn b, signals, ev
  joini v, a
  ret   v
.end
.func waits(ev:ref) -> i64
  .local r:i64
  evwait ev
  const r, 40
  ret   r
.end
.func signals(ev:ref) -> i64
  .local r:i64
  evsignal ev
  const r, 1
  ret   r
.end
.func thrower() -> i64
  .local e:ref, s:ref
  const s, "no"
  newerr e, s
  throw e
.end
.func throws() -> i64
  .local a:ref, v:i64
  spawn a, thrower
  joini v, a
  ret   v
.end
.func timed() -> i64
  .local a:ref, v:i64, d:i64
  const v, 1
  spawn a, seven, v
  const d, 1000000000
  intr  _, time.timeout, d
  joini v, a
  ret   v
.end
.func mistyped() -> i64
  .local a:ref, v:i64
  spawn a, half
  joini v, a
  ret   v
.end
`
	p := verified(t, src)
	for _, workers := range []int{1, 2} {
		d := &joinDispatcher{}
		s, ctl, err := New(Config{Workers: workers, Dispatcher: d})
		require.NoError(t, err)
		d.c = ctl
		wheel := timerwheel.DefaultConfig()
		e, err := ctl.RegisterEngine("e", EngineRuntimeConfig{TimerWheel: &wheel})
		require.NoError(t, err)
		ctl.SpawnInLoop(e)
		require.NoError(t, ctl.Start())
		resumed := func() []string {
			d.mu.Lock()
			defer d.mu.Unlock()
			r := d.resumed
			d.resumed = nil
			return r
		}

		tk, o := runToEnd(t, s, ctl, e, p, "rejoin", vmloop.I64(1000))
		require.Equal(t, Success, o.Kind, "%v", o)
		require.Equal(t, int64(7), o.Value.Int())
		// The first join runs the child first, unless firstOK refuses
		// (then it is a request, and parks); the 999 others find it done.
		require.GreaterOrEqual(t, tk.ex().Reductions(), uint64(999*32), "each join is charged as its request is")
		require.LessOrEqual(t, len(d.takeSeen()), 1)
		resumed()

		const n = 300
		_, o = runToEnd(t, s, ctl, e, p, "sum", vmloop.I64(n))
		require.Equal(t, Success, o.Kind, "%v", o)
		require.Equal(t, int64(n*(n-1)+n*14+n*2), o.Value.Int(), "each join gave its target's value")
		// A join of a child in the lifo slot runs it first unless a pick
		// would look at something first (firstOK: the inject queue's
		// cadence, a due timer), and with another worker a child may be
		// stolen and still run when its spawner joins it: those joins
		// are requests. Of the 4n joins, the most are answered in the loop.
		require.Less(t, len(d.takeSeen()), n, "%d workers: the joins are answered in the loop", workers)
		resumed()

		tk, o = runToEnd(t, s, ctl, e, p, "busy", vmloop.I64(3000))
		require.Equal(t, Success, o.Kind, "%v", o)
		require.Equal(t, int64(3000), o.Value.Int())
		require.Less(t, tk.ex().Reductions(), uint64(3000), "the child's 9,000 reductions, run first, are not its joiner's")

		_, o = runToEnd(t, s, ctl, e, p, "parked", vmloop.Ext(vmloop.KindEvent, ctl.NewEvent()))
		require.Equal(t, Success, o.Kind, "%v", o)
		require.Equal(t, int64(40), o.Value.Int())
		require.Contains(t, d.takeSeen(), "task.join_i64", "a join of a parked task is a request")
		require.Equal(t, []string{"task.join_i64"}, resumed(), "resumed by the dispatcher")

		_, o = runToEnd(t, s, ctl, e, p, "throws")
		require.Equal(t, Failure, o.Kind, "%v", o)
		require.Equal(t, []string{"task.join_i64"}, d.takeSeen(), "a failed target's join is a request")

		_, o = runToEnd(t, s, ctl, e, p, "timed")
		require.Equal(t, Success, o.Kind, "%v", o)
		require.Equal(t, []string{"task.join_i64"}, d.takeSeen(), "a join a timeout bounds is a request")

		_, o = runToEnd(t, s, ctl, e, p, "mistyped")
		require.Equal(t, Trapped, o.Kind, "%v", o)
		require.LessOrEqual(t, len(d.takeSeen()), 1, "answered in the loop, but where firstOK refuses the run first")

		endAll(t, s, ctl)
	}
}
