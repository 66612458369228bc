package vmloop

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func newTestHeap(owner uint32, limit int64) *heap {
	h := &new(Exec).heap // every heap is an Exec's (heap.exec)
	h.init(owner, boundsFor(limit, nil))
	return h
}

// TestHeapHandles: the handle layout, null, free-list reuse with a
// generation bump, and retirement of a slot whose generation would wrap.
func TestHeapHandles(t *testing.T) {
	h := newTestHeap(0x1234567, 1<<20) // owner truncated to 24 bits
	x := h.newString("abc")
	if x&handleIdxMask != 1 || (x>>handleGenShift)&handleGenMask != 1 || x>>handleOwnerShift != 0x234567 {
		t.Fatalf("handle %#x: want index 1, generation 1, owner 0x234567", x)
	}
	if o := h.get(x, KindString); o == nil || o.str() != "abc" {
		t.Fatal("get of a live string failed")
	}
	if h.get(x, KindBytes) != nil || h.get(0, KindString) != nil || h.getLive(0) != nil {
		t.Fatal("wrong kind or null accepted")
	}
	if h.bytes != objHeader+3 || h.liveObjects() != 1 {
		t.Fatalf("accounting: %d bytes, %d live", h.bytes, h.liveObjects())
	}
	if !h.release(x) || h.release(x) {
		t.Fatal("release of a live handle failed or double release succeeded")
	}
	if h.bytes != 0 || h.liveObjects() != 0 || h.getLive(x) != nil {
		t.Fatal("released object still accounted or live")
	}
	y := h.newBytes([]byte{1})
	if y&handleIdxMask != 1 || (y>>handleGenShift)&handleGenMask != 2 {
		t.Fatalf("reused handle %#x: want index 1, generation 2", y)
	}
	if msg := h.explain(x, KindString); !strings.Contains(msg, "stale") {
		t.Errorf("explain(stale) = %q", msg)
	}
	// generation wrap: the slot is retired, never reused
	h.objs[0].gen = handleGenMask // the object of handle index 1
	z := h.handle(1)
	h.release(z)
	w := h.newString("w")
	if w&handleIdxMask == 1 {
		t.Errorf("a slot whose generation wrapped was reused: %#x", w)
	}
	if h.getLive(z) != nil || h.getLive(z&^(handleGenMask<<handleGenShift)) != nil {
		t.Error("handle of a retired slot is live")
	}
	// explain covers every case
	other := newTestHeap(9, 1<<20)
	ox := other.newString("o")
	for _, c := range []struct {
		x    uint64
		want Kind
		msg  string
	}{
		{0, KindString, "null handle (want string)"},
		{ox, KindString, "foreign handle"},
		{uint64(h.owner)<<handleOwnerShift | 1<<handleGenShift | 999, KindBytes, "invalid handle"},
		{w, KindBytes, "wrong kind: want bytes got string"},
		{w, anyArray, "want an array got string"},
		{z, KindVoid, "stale handle"},
	} {
		if msg := h.explain(c.x, c.want); !strings.Contains(msg, c.msg) {
			t.Errorf("explain(%#x, %s) = %q, want %q", c.x, c.want, msg, c.msg)
		}
	}
}

// TestHeapLimitAccounting: allocation stops at the limit; Value.Size and
// the heap agree on imported values.
func TestHeapLimitAccounting(t *testing.T) {
	inner, _ := Array(KindI64, I64(1), I64(2))
	arr, _ := Array(KindString, Str("hello"), Bytes([]byte("xy")), inner, Err("K", "msg"), Void(), Ext(KindEvent, 1))
	for _, v := range []Value{Str("abc"), Bytes(make([]byte, 100)), inner, arr, Err(ErrKindHost, "m"), Ext(KindTask, "t")} {
		h := newTestHeap(1, 1<<20)
		_, err := h.importValue(v)
		require.NoError(t, err)
		if h.bytes != int64(v.Size()) {
			t.Errorf("import of %v: %d bytes accounted, Value.Size %d", v, h.bytes, v.Size())
		}
		if v.Size() == 0 {
			continue // a task: no heap bytes (taskref.go)
		}
		small := newTestHeap(1, int64(v.Size())-1)
		if _, err := small.importValue(v); err == nil || err.(TrapInfo).Code != TrapHeapLimit {
			t.Errorf("import of %v into a heap one byte too small: %v", v, err)
		}
	}
	h := newTestHeap(1, 100)
	if h.newBytes(make([]byte, 60)) == 0 || h.newBytes(make([]byte, 10)) != 0 {
		t.Error("limit not enforced")
	}
	if ti := h.allocFail(42); ti.Code != TrapHeapLimit || !strings.Contains(ti.Msg, "92 of 100") {
		t.Errorf("allocFail: %v", ti)
	}
	if _, err := h.importValue(I64(1)); err == nil {
		t.Error("import of an i64 as a reference succeeded")
	}
}

// TestHeapExportImport: export deep-copies bytes and arrays and shares
// strings; import of the export reproduces the value; a DAG that would
// expand beyond the heap limit is refused.
func TestHeapExportImport(t *testing.T) {
	inner, _ := Array(KindF64, F64(1.5), F64(-2))
	v, _ := Array(KindString, Str("s"), Bytes([]byte{1, 2, 3}), inner, Void(), Err(ErrKindTask, "x"), Ext(KindExt, 42))
	h := newTestHeap(3, 1<<20)
	x, err := h.importValue(v)
	require.NoError(t, err)
	out, err := h.export(x, 1<<20)
	if err != nil || !out.Equal(v) {
		t.Fatalf("export = %v %v, want %v", out, err, v)
	}
	// the export is a copy: changing the heap does not change it
	bx := h.at(x).arr()[1]
	h.at(bx).bytes()[0] = 99
	if out.Elems()[1].BytesData()[0] != 1 {
		t.Error("exported bytes alias the heap")
	}
	if v, err := h.export(0, 100); err != nil || v.Kind() != KindVoid {
		t.Errorf("export(null) = %v %v", v, err)
	}
	h.release(bx)
	if _, err := h.export(x, 1<<20); err == nil || err.(TrapInfo).Code != TrapHandle {
		t.Errorf("export with a stale element: %v", err)
	}

	// a chain of arrays each holding the next one twice: 2^30 leaves
	h = newTestHeap(3, 1<<20)
	prev := uint64(0)
	for i := 0; i < 30; i++ {
		a := h.newArray(KindArrayRef, 2)
		h.at(a).arr()[0], h.at(a).arr()[1] = prev, prev
		prev = a
	}
	if _, err := h.export(prev, 1<<20); err == nil || err.(TrapInfo).Code != TrapHeapLimit {
		t.Errorf("export of an exponential DAG: %v", err)
	}
	// reaches: the cycle check walks shared sub-arrays once
	found, n := h.reaches(int32(prev&handleIdxMask), -1)
	if found || n != 60 {
		t.Errorf("reaches over the DAG: found %v after %d elements, want 60", found, n)
	}
}

// TestHeapReset: reset drops everything.
func TestHeapReset(t *testing.T) {
	h := newTestHeap(1, 1<<20)
	x := h.newString("a")
	h.reset()
	if h.bytes != 0 || h.liveObjects() != 0 || h.getLive(x) != nil {
		t.Error("reset kept objects")
	}
	if y := h.newString("b"); y == 0 || h.at(y).str() != "b" {
		t.Error("allocation after reset failed")
	}
}

// TestLargestObject: an object's payload length is 32-bit; an allocation
// over 4 GiB traps as a heap-limit error even under a larger heap limit
// (nothing is allocated first).
func TestLargestObject(t *testing.T) {
	p := itProg(t, nil, itFn("big", "(i64)->i64", 2, "bnew r1, r0; blen r0, r1; ret r0"))
	for _, c := range []struct {
		n    int64
		trap bool
	}{{1 << 20, false}, {5 << 30, true}} {
		e, err := NewExec(p, p.FuncIndex("big"), []Value{I64(c.n)}, Limits{MaxHeapBytes: 16 << 30}, 7)
		require.NoError(t, err)
		sig := e.Run(1 << 20)
		if !c.trap {
			if sig != SigCompleted || e.Result().Int() != c.n {
				t.Fatalf("bnew %d: %v %v %v", c.n, sig, e.Result(), e.Trap())
			}
			continue
		}
		if sig != SigTrapped || e.Trap().Code != TrapHeapLimit || !strings.Contains(e.Trap().Msg, "largest object") {
			t.Fatalf("bnew %d: %v %v", c.n, sig, e.Trap())
		}
	}
}

// TestLargeTablesPooled: a heap that outgrows maxRecycledObjs gives the
// tables it grew through back to tablePools when it is freed (not while it
// lives; cleared when outgrown, so they keep nothing alive), and a heap that
// grows later reuses them cleared: fresh generations, no payload of the old
// heap.
func TestLargeTablesPooled(t *testing.T) {
	for c := range tablePools {
		for tablePools[c].Get() != nil { // start from empty pools
		}
	}
	const n = 4 * maxRecycledObjs // grows through 2·max and 4·max slots
	h := newTestHeap(1, 1<<30)
	var first *object
	for i := 0; i < n; i++ {
		x := h.newString("old")
		if i == maxRecycledObjs { // in the table of 2·max slots
			first = h.at(x)
		}
	}
	if first.kind != 0 || first.str() != "" {
		t.Fatal("an outgrown table still holds its objects")
	}
	if h.side == nil || len(h.side.retired) != 1 || cap(h.side.retired[0]) != 2*maxRecycledObjs {
		t.Fatalf("retired tables: %+v, want the one of %d slots", h.side, 2*maxRecycledObjs)
	}
	big := &h.objs[0] // the table of 4·max slots
	h.reset()
	for _, size := range []int{2 * maxRecycledObjs, 4 * maxRecycledObjs} {
		tb := takeTable(size)
		if tb == nil && raceEnabled {
			continue // sync.Pool drops some Puts under -race
		}
		if tb == nil {
			t.Fatalf("no pooled table of %d slots after the heap was freed", size)
		}
		putTable(tb)
	}
	// A second heap grows into the pooled tables: every slot starts clean.
	g := newTestHeap(2, 1<<30)
	for i := 0; i < n; i++ {
		x := g.newString("new")
		if (x>>handleGenShift)&handleGenMask != 1 || g.at(x).str() != "new" {
			t.Fatalf("slot %d of a reused table: handle %#x, %q", i, x, g.at(x).str())
		}
	}
	if g.liveObjects() != n || cap(g.objs) != n {
		t.Fatalf("second heap: %d live, table of %d", g.liveObjects(), cap(g.objs))
	}
	if &g.objs[0] != big && !raceEnabled {
		t.Error("the second heap allocated a table of 4·max slots instead of taking the pooled one")
	}
	// Sizes outside the pooled range are never pooled.
	for _, size := range []int{maxRecycledObjs, 3 * maxRecycledObjs, 2 << maxPooledClass} {
		if _, ok := pooledClass(size); ok {
			t.Errorf("pooledClass(%d) is pooled", size)
		}
	}
}
