package vmloop

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// bigResult is a ref array of n one-character strings (n objects and the
// array), the shape of a large joined result.
func bigResult(t *testing.T, n int) Value {
	t.Helper()
	elems := make([]Value, n)
	for i := range elems {
		elems[i] = Str("x")
	}
	v, err := Array(KindArrayRef, elems...)
	require.NoError(t, err)
	return v
}

// resultLimits holds a 1M-element result twice over.
var resultLimits = Limits{MaxHeapBytes: 1 << 30}

// TestResultExportInSteps: a task returning a 1M-element ref array copies
// it out of its heap over many Runs, each of about copyStep reductions
// charged to it, not in one step of 0.1–0.3 s that cost it nothing; the
// copy is the one export makes, and its HostBytes is counted on the way.
func TestResultExportInSteps(t *testing.T) {
	const n = 1 << 20
	p := itProg(t, nil, itFn("ret", "(ref)->ref", 1, "ret r0"))
	v := bigResult(t, n)
	e, err := NewExec(p, 0, []Value{v}, resultLimits, 1)
	require.NoError(t, err)
	runs := 0
	var most, root uint64 // root: the Run that makes the root, whose payload is one step
	var slow time.Duration
	for {
		before := e.Reductions()
		t0 := time.Now()
		sig := e.Run(1)
		slow = max(slow, time.Since(t0))
		w := e.Reductions() - before
		if w > root {
			w, root = root, w
		}
		most = max(most, w)
		runs++
		if sig != SigPreempted {
			require.Equal(t, SigCompleted, sig, "trap: %v", e.Trap())
			break
		}
	}
	t.Logf("%d Runs, the longest %v", runs, slow)
	require.GreaterOrEqual(t, runs, n*copyObjCost/copyStep, "the copy is spread over Runs")
	require.LessOrEqual(t, most, uint64(copyStep+2*copyObjCost+16), "work of one Run")
	require.LessOrEqual(t, root, uint64(copyStep+2*copyObjCost+16+valueBytes*n/64), "the Run that makes the root")
	require.GreaterOrEqual(t, e.Reductions(), uint64(n*copyObjCost), "charged the copy")
	got := e.Result()
	require.True(t, v.Equal(got))
	require.Equal(t, got.HostBytes(), e.ResultHostBytes())

	// in one slice: the same result and cost
	e2, err := NewExec(p, 0, []Value{v}, resultLimits, 1)
	require.NoError(t, err)
	require.Equal(t, SigCompleted, e2.Run(1<<40))
	require.Equal(t, e.Reductions(), e2.Reductions())
	require.True(t, v.Equal(e2.Result()))
}

// TestResultExportDropped: a task freed in the middle of its result's
// export gives back what the copy reserved of the engine's budget.
func TestResultExportDropped(t *testing.T) {
	p := itProg(t, nil, itFn("ret", "(ref)->ref", 1, "ret r0"))
	b := NewBudget(1 << 40)
	lim := resultLimits
	lim.Memory = b
	e, err := NewExec(p, 0, []Value{bigResult(t, 1<<18)}, lim, 1)
	require.NoError(t, err)
	for range 10 {
		require.Equal(t, SigPreempted, e.Run(1))
	}
	require.NotNil(t, e.rare.exp, "under way")
	require.Greater(t, e.rare.exp.c.taken, int64(0), "the copy holds budget")
	e.Recycle()
	require.Zero(t, b.Used(), "the budget balances")
}

// joinAt returns an Exec stopped at a joinr request (its destination a
// ref register), with a budget of mem.
func joinAt(t *testing.T, lim Limits) *Exec {
	t.Helper()
	p := itProg(t, nil, itFn("join", "(ref)->ref", 2, "joinr r1, r0; ret r1"))
	e, err := NewExec(p, 0, []Value{Ext(KindTask, 1)}, lim, 2)
	require.NoError(t, err)
	require.Equal(t, SigIntrinsic, e.Run(100))
	return e
}

// TestJoinImportInSteps: a joined 1M-element result is imported into the
// joiner's heap a step of about copyStep reductions (owed) per call, the
// request pending until the last; the heap then holds what importValue
// makes.
func TestJoinImportInSteps(t *testing.T) {
	const n = 1 << 20
	v := bigResult(t, n)
	e := joinAt(t, resultLimits)
	calls := 0
	var most, total int64
	var slow time.Duration
	for {
		t0 := time.Now()
		more, room, err := e.CompleteIfRoomMore(v)
		slow = max(slow, time.Since(t0))
		c := e.TakeCopyCharge()
		if calls > 0 { // the first makes the root: its payload is one step
			most = max(most, c)
		}
		total += c
		calls++
		require.True(t, room)
		require.NoError(t, err)
		if !more {
			break
		}
		require.Equal(t, stRequest, e.state, "pending between steps")
	}
	t.Logf("%d calls, the longest %v", calls, slow)
	require.GreaterOrEqual(t, calls, n*copyObjCost/copyStep, "the import is spread over calls")
	require.LessOrEqual(t, most, int64(copyStep+2*copyObjCost+16), "work of one call")
	require.GreaterOrEqual(t, total, int64(n*copyObjCost), "owed the copy")
	require.Equal(t, SigCompleted, e.Run(1<<40))
	require.True(t, v.Equal(e.Result()))
	e2 := joinAt(t, resultLimits)
	room, err := e2.CompleteIfRoom(v)
	require.True(t, room)
	require.NoError(t, err)
	require.Equal(t, e2.HeapBytes(), e.HeapBytes(), "what importValue makes")
	require.Equal(t, e2.heap.liveObjects(), e.heap.liveObjects())
}

// TestJoinImportRefused: a result the joiner's heap cannot take is
// refused after its steps, with the heap as it was (what the import made
// released, in steps too) and the request pending; a joiner dropped in
// the middle of an import gives its budget back with its heap.
func TestJoinImportRefused(t *testing.T) {
	const n = 1 << 18
	v := bigResult(t, n)
	e := joinAt(t, Limits{MaxHeapBytes: int64(v.Size()) / 2})
	before := e.HeapBytes()
	calls := 0
	for {
		more, room, err := e.CompleteIfRoomMore(v)
		calls++
		if !more {
			require.False(t, room)
			var ti TrapInfo
			require.ErrorAs(t, err, &ti)
			require.Equal(t, TrapHeapLimit, ti.Code)
			break
		}
	}
	require.Greater(t, calls, 2, "made and released in steps")
	require.Equal(t, before, e.HeapBytes(), "the heap as it was")
	require.Equal(t, stRequest, e.state, "the request pending")
	require.True(t, e.Raise(Err(ErrKindResource, "refused")) || e.Trap().Code == TrapNone)

	b := NewBudget(1 << 40)
	lim := resultLimits
	lim.Memory = b
	e = joinAt(t, lim)
	for range 10 {
		more, _, err := e.CompleteIfRoomMore(v)
		require.NoError(t, err)
		require.True(t, more)
	}
	require.Greater(t, b.Used(), int64(1<<20), "the import holds budget")
	e.Recycle()
	require.Zero(t, b.Used(), "the budget balances")
}
