package vmloop

import (
	"reflect"
	"testing"
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
		if err := old.Reset(p, fi, c.args, DefaultLimits, 9); err != nil {
			t.Fatal(err)
		}
		fresh, err := NewExec(p, fi, c.args, DefaultLimits, 9)
		if err != nil {
			t.Fatal(err)
		}
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
