package slots

import (
	"testing"

	"github.com/jadevm/jade/evpoll"
)

// TestAllocReleaseGenerations: a released entry's old ID stops matching,
// also after the entry is reused; foreign IDs never match.
func TestAllocReleaseGenerations(t *testing.T) {
	tb := New[int](2)
	i0, e0, ok := tb.Alloc()
	i1, _, ok1 := tb.Alloc()
	if !ok || !ok1 || i0 == i1 || tb.Active() != 2 {
		t.Fatalf("alloc: %d %v, %d %v, active %d", i0, ok, i1, ok1, tb.Active())
	}
	if _, _, ok := tb.Alloc(); ok {
		t.Fatal("alloc from a full table")
	}
	*e0 = 42
	id := tb.ID(i0)
	if id == 0 || uint64(id)&IndexMask != uint64(i0) {
		t.Fatalf("id %#x for index %d", id, i0)
	}
	if idx, e := tb.Lookup(id); idx != i0 || e == nil || *e != 42 {
		t.Fatalf("lookup: %d %v", idx, e)
	}
	tb.Release(i0)
	if idx, e := tb.Lookup(id); idx != -1 || e != nil || tb.InUse(i0) {
		t.Fatal("a released entry still matches its old id")
	}
	i2, e2, _ := tb.Alloc()
	if i2 != i0 || *e2 != 42 || tb.ID(i2) == id {
		t.Fatalf("reuse: index %d value %d id %#x (old %#x)", i2, *e2, tb.ID(i2), id)
	}
	if _, e := tb.Lookup(id); e != nil {
		t.Fatal("stale id matches the reused entry")
	}
	for _, bad := range []evpoll.OpID{0, 1<<40 | 7, 1<<63 | evpoll.OpID(tb.ID(i1))} {
		if idx, e := tb.Lookup(bad); idx != -1 || e != nil {
			t.Errorf("lookup(%#x) = %d", bad, idx)
		}
	}
	if tb.Len() != 2 {
		t.Error("table sizes")
	}
}

// TestGenerationWraps: the generation skips 0 when it wraps.
func TestGenerationWraps(t *testing.T) {
	tb := New[struct{}](1)
	tb.meta[0].gen = GenMask
	idx, _, _ := tb.Alloc()
	tb.Release(idx)
	if g := tb.meta[0].gen; g != 1 {
		t.Fatalf("generation after GenMask = %d, want 1", g)
	}
}
