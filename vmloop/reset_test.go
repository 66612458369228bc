package vmloop

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestResetEqualsNew: an Exec that ran a task to its end (deep recursion,
// heap objects, a pending request's leftovers) and was recycled, then Reset,
// is field for field the Exec NewExec makes — so Reset forgets nothing when
// Exec grows a field — and runs the same.
func TestResetEqualsNew(t *testing.T) {
	p := itProg(t, &Program{KStr: []string{"jade"}},
		itFib(0),
		itFn("str", "(ref)->ref", 2, "lds r1, 0; sconcat r1, r1, r0; ret r1"),
	)
	old := itStart(t, p, "fib", I64(15))
	if sig := itRun(t, old, 1000); sig != SigCompleted || old.Result().Int() != 610 {
		t.Fatalf("fib: %v %v", sig, old.Result())
	}
	old.Recycle()
	for _, c := range []struct {
		fn   string
		args []Value
	}{{"str", []Value{Str("!")}}, {"fib", []Value{I64(10)}}} {
		fi := p.FuncIndex(c.fn)
		require.NoError(t, old.Reset(p, fi, c.args, DefaultLimits, 9))
		fresh, err := NewExec(p, fi, c.args, DefaultLimits, 9)
		require.NoError(t, err)
		if len(old.heap.objs) == 0 {
			old.heap.objs = nil // recycled capacity; DeepEqual tells nil from empty
		}
		if old.rare != nil && reflect.DeepEqual(*old.rare, execRare{}) {
			old.rare = nil // kept, emptied
		}
		if !reflect.DeepEqual(old, fresh) {
			t.Fatalf("%s: reset Exec differs from a new one:\n%+v\n%+v", c.fn, old, fresh)
		}
		s1, s2 := itRun(t, old, 1000), itRun(t, fresh, 1000)
		if s1 != s2 || !old.Result().Equal(fresh.Result()) || old.Reductions() != fresh.Reductions() {
			t.Fatalf("%s: %v %v vs %v %v", c.fn, s1, old.Result(), s2, fresh.Result())
		}
		old.Recycle()
	}
}

// TestResetSpawnEqualsReset: starting the child of a pending spawn request
// from the spawner's registers (ResetSpawn) gives the same activation as
// Reset with the request's arguments exported as Values — scalar and
// reference arguments alike — and a request that is not a spawn is refused.
func TestResetSpawnEqualsReset(t *testing.T) {
	p := itProg(t, &Program{KStr: []string{"jade"}},
		itFn("main", "(i64)->ref", 4, "ldi r1, 2; lds r2, 0; spawn r0, 3, 1; ret r0"),
		itFn("child", "(i64,i64,ref)->i64", 4, "slen r3, r2; add r0, r0, r1; add r0, r0, r3; ret r0"),
	)
	parent := itStart(t, p, "main", I64(40))
	if sig := parent.Run(1 << 20); sig != SigIntrinsic || parent.Request().Op != SPAWN {
		t.Fatalf("parent: %v %+v", sig, parent.Request())
	}
	args := make([]Value, parent.Request().NArgs)
	for i := range args {
		v, err := parent.ArgValue(i)
		require.NoError(t, err)
		args[i] = v
	}
	byValues, err := NewExec(p, int(parent.Request().Func), args, DefaultLimits, 9)
	require.NoError(t, err)
	direct := new(Exec)
	require.NoError(t, direct.ResetSpawn(parent, DefaultLimits, 9))
	if !reflect.DeepEqual(direct, byValues) {
		t.Fatalf("ResetSpawn differs from Reset with exported arguments:\n%+v\n%+v", direct, byValues)
	}
	s1, s2 := itRun(t, direct, 1000), itRun(t, byValues, 1000)
	if s1 != SigCompleted || s2 != s1 || direct.Result().Int() != 46 || byValues.Result().Int() != 46 {
		t.Fatalf("%v %v vs %v %v (want 46)", s1, direct.Result(), s2, byValues.Result())
	}
	other := itStart(t, p, "main", I64(1))
	if err := new(Exec).ResetSpawn(other, DefaultLimits, 9); err == nil || !strings.Contains(err.Error(), "no pending spawn request") {
		t.Fatalf("ResetSpawn without a spawn request: %v", err)
	}
}
