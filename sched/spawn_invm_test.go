package sched

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
)

// spawnDispatcher answers spawn requests as the bus does (without its
// capability check and descriptor hand-over) and every other request with
// no value, recording each request it gets.
type spawnDispatcher struct {
	c    *Control
	mu   sync.Mutex
	seen []string
}

func (d *spawnDispatcher) Intrinsic(t *Task, req *vmloop.Request) Action {
	d.mu.Lock()
	d.seen = append(d.seen, req.Intr.Name)
	d.mu.Unlock()
	ex := t.ex()
	if req.Op == vmloop.SPAWN {
		child, err := d.c.PrepareSpawn(t)
		if err == ErrSpawnMore {
			return ActMore
		}
		if err != nil {
			ex.SetTrapErr(err)
			return ActTrapped
		}
		a := ActContinue
		if err := ex.CompleteTask(child); err != nil {
			ex.SetTrapErr(err)
			a = ActTrapped
		}
		d.c.Launch(t, child)
		return a
	}
	if ex.CompleteVoid() != nil {
		return ActTrapped
	}
	return ActContinue
}
func (d *spawnDispatcher) Resume(t *Task, req *vmloop.Request) Action {
	if t.ex().CompleteVoid() != nil {
		return ActTrapped
	}
	return ActContinue
}
func (d *spawnDispatcher) Abandon(*Task, *vmloop.Request, bool) {}

// takeSeen returns the requests the dispatcher got so far and forgets them.
func (d *spawnDispatcher) takeSeen() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.seen
	d.seen = nil
	return s
}

// TestSpawnAnsweredInVM: a spawn from a task of an engine that may spawn
// (SpawnInLoop) is answered in the VM loop: no request reaches the
// dispatcher, every child runs with its arguments (scalars, an event, a
// string copied into its heap), the spawner's handle names the child, and
// each spawn costs the spawner what the request would (spawnCost). An
// engine without SpawnInLoop, a spawn with an ext argument (the bus hands
// descriptors over) and a spawn past the engine's live-task limit are
// requests: the dispatcher answers, or reports, them.
func TestSpawnAnsweredInVM(t *testing.T) {
	const src = `.func parent(n:i64, ev:ref) -> i64
  .local i:i64, c:ref, s:ref, j:i64
  const i, 0
  ldb   s, "four"
loop:
  jge   i, n, done
  muli  j, i, 3
  spawn c, child, i, ev, s, j
  free  c
  evwait ev
  addi  i, i, 1
  jmp   loop
done:
  ret   i
.end
.func child(i:i64, ev:ref, s:ref, j:i64) -> i64
  .local n:i64, z:i64
  blen  n, s
  jnei  n, 4, bad
  muli  n, i, 3
  jne   n, j, bad
  evsignal ev
  ret   i
bad:
  cancelled z
  evsignal ev
  ret   n
.end
.func big(n:i64) -> i64
  .local a:ref, c:ref
  anew  a, n, i64
  spawn c, length, a
  free  c
  ret   n
.end
.func length(a:ref) -> i64
  .local n:i64
  alen  n, a
  ret   n
.end
.func limited(ev:ref) -> i64
  .local a:ref, b:ref, n:i64
  spawn a, waiter, ev
  spawn b, waiter, ev
  const n, 1
  ret   n
.end
.func waiter(ev:ref) -> i64
  .local n:i64
  evwait ev
  const n, 3
  ret   n
.end
.func ext(x:ref) -> i64
  .local c:ref, n:i64
  spawn c, keep, x
  const n, 1
  ret   n
.end
.func keep(x:ref) -> i64
  .local n:i64
  const n, 2
  ret   n
.end
`
	p := verified(t, src)
	for _, workers := range []int{1, 2} {
		d := &spawnDispatcher{}
		s, ctl, err := New(Config{Workers: workers, Dispatcher: d})
		require.NoError(t, err)
		d.c = ctl
		e, err := ctl.RegisterEngine("loop", EngineRuntimeConfig{})
		require.NoError(t, err)
		ctl.SpawnInLoop(e)
		plain, err := ctl.RegisterEngine("plain", EngineRuntimeConfig{})
		require.NoError(t, err)
		lim := EngineRuntimeConfig{}
		lim.Limits.LiveTasks = 2
		small, err := ctl.RegisterEngine("small", lim)
		require.NoError(t, err)
		ctl.SpawnInLoop(small)
		require.NoError(t, ctl.Start())

		const n = 200
		tk, o := runToEnd(t, s, ctl, e, p, "parent", vmloop.I64(n), vmloop.Ext(vmloop.KindEvent, ctl.NewEvent()))
		require.Equal(t, Success, o.Kind, "%v", o)
		require.Equal(t, int64(n), o.Value.Int(), "every child ran with its arguments and signalled")
		require.Empty(t, d.takeSeen(), "%d workers: a spawn of an engine that may spawn is answered in the loop", workers)
		require.GreaterOrEqual(t, tk.ex().Reductions(), uint64(n*spawnCost(e.cfg.Load().ReductionLimit)), "each spawn is charged as its request is (S-6)")

		_, o = runToEnd(t, s, ctl, plain, p, "parent", vmloop.I64(n), vmloop.Ext(vmloop.KindEvent, ctl.NewEvent()))
		require.Equal(t, Success, o.Kind, "%v", o)
		seen := d.takeSeen()
		require.Len(t, seen, n)
		require.Equal(t, "task.spawn", seen[0], "without SpawnInLoop a spawn is a request")

		// The copy of a large argument is charged once, in the loop as
		// by the request (where the spawn's own cost is the worker's).
		inLoop, o := runToEnd(t, s, ctl, e, p, "big", vmloop.I64(4000))
		require.Equal(t, Success, o.Kind, "%v", o)
		byRequest, o := runToEnd(t, s, ctl, plain, p, "big", vmloop.I64(4000))
		require.Equal(t, Success, o.Kind, "%v", o)
		require.Equal(t, []string{"task.spawn"}, d.takeSeen())
		require.Greater(t, byRequest.ex().Reductions(), uint64(1000), "the copy is charged")
		require.Equal(t, byRequest.ex().Reductions()+uint64(spawnCost(e.cfg.Load().ReductionLimit)), inLoop.ex().Reductions())

		_, o = runToEnd(t, s, ctl, e, p, "ext", vmloop.Ext(vmloop.KindExt, "a descriptor stand-in"))
		require.Equal(t, Success, o.Kind, "%v", o)
		require.Equal(t, []string{"task.spawn"}, d.takeSeen(), "an ext argument is the dispatcher's to hand over")

		// Two live places: the host's task and its first child, which
		// waits; the second spawn fails in the loop and is made again as
		// a request, which reports the limit (here: a trap).
		ev := ctl.NewEvent()
		_, o = runToEnd(t, s, ctl, small, p, "limited", vmloop.Ext(vmloop.KindEvent, ev))
		require.Equal(t, Trapped, o.Kind, "%v", o)
		require.ErrorContains(t, o.Trap, "live task", "%v", o)
		require.Equal(t, []string{"task.spawn"}, d.takeSeen(), "a spawn the loop could not make is a request")
		ctl.EventSignal(nil, ev) // kept if the child has not waited yet

		endAll(t, s, ctl)
	}
}
