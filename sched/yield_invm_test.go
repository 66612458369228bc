package sched

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
)

// yieldDispatcher records the requests it gets and answers each at once
// (task.cancelled: 0).
type yieldDispatcher struct {
	mu   sync.Mutex
	seen []string
	by   []uint64 // the asking task of each
}

func (d *yieldDispatcher) Intrinsic(t *Task, req *vmloop.Request) Action {
	d.mu.Lock()
	d.seen = append(d.seen, req.Intr.Name)
	d.by = append(d.by, t.ID())
	d.mu.Unlock()
	if err := t.ex().Complete(vmloop.I64(0)); err != nil {
		return ActTrapped
	}
	return ActContinue
}
func (d *yieldDispatcher) Resume(*Task, *vmloop.Request) Action { return ActTrapped }
func (d *yieldDispatcher) Abandon(*Task, *vmloop.Request, bool) {}

// TestYieldAnsweredInVM: a task record's YIELD reaches no dispatcher (the
// loop ends the slice with vmloop.SigYield), is charged intrCost as its
// request was, and still hands the worker to the other runnable tasks.
func TestYieldAnsweredInVM(t *testing.T) {
	const src = `
.func yielder(k:i64) -> i64
  .local i:i64
  const i, 0
l:
  jge   i, k, e
  yield
  addi  i, i, 1
  jmp   l
e:
  ret   i
.end
.func asker(k:i64) -> i64
  .local i:i64, z:i64
  const i, 0
l:
  jge   i, k, e
  cancelled z
  yield
  addi  i, i, 1
  jmp   l
e:
  ret   i
.end`
	p := verified(t, src)
	const limit, k = 400, 2000
	d := &yieldDispatcher{}
	s, ctl, err := New(Config{Workers: 1, Dispatcher: d})
	require.NoError(t, err)
	e, err := ctl.RegisterEngine("e", EngineRuntimeConfig{ReductionLimit: limit})
	require.NoError(t, err)
	require.NoError(t, ctl.Start())
	dispatches := func() uint64 { return s.Metrics().Workers[0].Dispatches }

	// Alone on its worker: each yield goes on in place until the slice's
	// budget is spent, and each costs intrCost besides its 3 instructions,
	// so a slice holds about limit/35 yields (without the charge it would
	// be cut every 32 yields by find's periodic look, about k/32 slices).
	d0 := dispatches()
	_, o := runToEnd(t, s, ctl, e, p, "yielder", vmloop.I64(k))
	require.Equal(t, Success, o.Kind, "%v", o)
	require.Equal(t, int64(k), o.Value.Int())
	require.Zero(t, len(d.seen), "yields reached the dispatcher")
	require.GreaterOrEqual(t, dispatches()-d0, uint64(k*intrCost/limit*9/10), "a yield was not charged intrCost")

	// Two askers on one worker: each yield hands the worker over, so
	// their requests alternate once both run.
	a, err := ctl.Prepare(nil, e, p, p.FuncIndex("asker"), []vmloop.Value{vmloop.I64(100)})
	require.NoError(t, err)
	b, err := ctl.Prepare(nil, e, p, p.FuncIndex("asker"), []vmloop.Value{vmloop.I64(100)})
	require.NoError(t, err)
	d.mu.Lock()
	d.seen, d.by = nil, nil
	d.mu.Unlock()
	ctl.Launch(nil, a)
	ctl.Launch(nil, b)
	<-a.Done()
	<-b.Done()
	endAll(t, s, ctl)
	d.mu.Lock()
	defer d.mu.Unlock()
	require.Len(t, d.seen, 200)
	for _, n := range d.seen {
		require.Equal(t, "task.cancelled", n, "a yield reached the dispatcher")
	}
	// From b's first request until a or b ends, they alternate.
	first := 0
	for d.by[first] != b.ID() {
		first++
	}
	na, nb := first, 0
	for i := first; i < len(d.by) && na < 100 && nb < 100; i++ {
		if d.by[i] == a.ID() {
			na++
		} else {
			nb++
		}
		if i > first {
			require.NotEqual(t, d.by[i-1], d.by[i], "request %d: a task ran on past its yield while another was runnable", i)
		}
	}
}
