package slots

import (
	"testing"

	"github.com/jadevm/jade/internal/evpoll"

	"github.com/stretchr/testify/require"
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
	if tb.Len() != 2 || tb.Cap() != 2 {
		t.Errorf("table sizes: len %d cap %d, want 2 and 2", tb.Len(), tb.Cap())
	}
}

// TestGenerationWraps: the generation skips 0 when it wraps.
func TestGenerationWraps(t *testing.T) {
	tb := New[struct{}](1)
	idx, _, _ := tb.Alloc()
	_, m := tb.slot(idx)
	m.gen = GenMask
	tb.Release(idx)
	if g := m.gen; g != 1 {
		t.Fatalf("generation after GenMask = %d, want 1", g)
	}
}

// TestGrowsLazily: a table with the largest maximum holds no entry until
// the first Alloc, then one chunk, and adds a chunk only when every
// allocated entry is in use.
func TestGrowsLazily(t *testing.T) {
	tb := New[[64]byte](Max + 1)
	if tb.Cap() != Max || tb.Len() != 0 || len(tb.chunks) != 0 {
		t.Fatalf("new table: cap %d len %d chunks %d, want %d, 0, 0", tb.Cap(), tb.Len(), len(tb.chunks), Max)
	}
	if n := testing.AllocsPerRun(10, func() { New[[64]byte](Max) }); n > 1 {
		t.Errorf("New(Max) made %v allocations, want 1 (the table header)", n)
	}
	held := make([]int32, 0, ChunkSize+1)
	for range ChunkSize {
		idx, _, ok := tb.Alloc()
		require.True(t, ok, "alloc failed below the maximum")
		held = append(held, idx)
		if tb.Len() != ChunkSize {
			t.Fatalf("after %d allocs: len %d, want one chunk (%d)", len(held), tb.Len(), ChunkSize)
		}
	}
	// Releasing and reallocating reuses the chunk.
	tb.Release(held[7])
	if idx, _, _ := tb.Alloc(); idx != held[7] || tb.Len() != ChunkSize {
		t.Fatalf("realloc: index %d (want %d), len %d", idx, held[7], tb.Len())
	}
	if idx, _, _ := tb.Alloc(); idx != ChunkSize || tb.Len() != 2*ChunkSize {
		t.Fatalf("alloc past a full chunk: index %d len %d, want %d and %d", idx, tb.Len(), ChunkSize, 2*ChunkSize)
	}
}

// TestGrowthAcrossChunks: a table whose maximum ends inside a chunk hands
// out every index below the maximum exactly once, IDs resolve in every
// chunk, and the table refuses an Alloc when all of it is in use.
func TestGrowthAcrossChunks(t *testing.T) {
	const n = 3*ChunkSize + 5
	tb := New[int](n)
	seen := make(map[int32]bool)
	ids := make([]evpoll.OpID, n)
	for i := range n {
		idx, e, ok := tb.Alloc()
		require.True(t, ok, "alloc %d of %d failed", i, n)
		if idx < 0 || idx >= n || seen[idx] {
			t.Fatalf("alloc %d: index %d out of range or repeated", i, idx)
		}
		seen[idx] = true
		*e = int(idx) * 3
		ids[idx] = tb.ID(idx)
	}
	if tb.Len() != n || tb.Active() != n || len(tb.chunks) != 4 {
		t.Fatalf("full table: len %d active %d chunks %d", tb.Len(), tb.Active(), len(tb.chunks))
	}
	if _, _, ok := tb.Alloc(); ok {
		t.Fatal("alloc from a table full at its maximum")
	}
	if tb.Len() != n {
		t.Fatalf("a refused alloc grew the table to %d", tb.Len())
	}
	for idx, id := range ids {
		if got, e := tb.Lookup(id); got != int32(idx) || e == nil || *e != idx*3 {
			t.Fatalf("lookup of index %d: %d %v", idx, got, e)
		}
	}
	if idx, e := tb.Lookup(evpoll.OpID(1<<IndexBits | n)); idx != -1 || e != nil {
		t.Fatalf("lookup past the last entry: %d", idx)
	}
	// Free one entry in the middle chunk and one in the short last one.
	for _, idx := range []int32{2*ChunkSize + 9, n - 1} {
		tb.Release(idx)
		if got, e := tb.Lookup(ids[idx]); got != -1 || e != nil {
			t.Fatalf("released index %d still matches", idx)
		}
		got, _, ok := tb.Alloc()
		if !ok || got != idx {
			t.Fatalf("alloc after releasing %d: %d %v", idx, got, ok)
		}
		if tb.ID(got) == ids[idx] {
			t.Fatalf("index %d reused with its old generation", idx)
		}
	}
}

// TestPointerStability: growing the table never moves an allocated entry,
// so a pointer the kernel holds stays valid.
func TestPointerStability(t *testing.T) {
	type ent struct {
		sa    [128]byte
		salen uint32
	}
	tb := New[ent](Max)
	idx, p, _ := tb.Alloc()
	p.sa[5], p.salen = 9, 77 // as the kernel writes an accepted peer's address
	id := tb.ID(idx)
	for range 40 * ChunkSize { // 40 chunks: the chunk list is reallocated several times
		if _, _, ok := tb.Alloc(); !ok {
			t.Fatal("alloc failed")
		}
	}
	require.Len(t, tb.chunks, 41, "chunks %d, want 41", len(tb.chunks))
	if tb.At(idx) != p || p.sa[5] != 9 || p.salen != 77 {
		t.Fatalf("entry %d moved: %p, was %p (salen %d)", idx, tb.At(idx), p, p.salen)
	}
	if _, e := tb.Lookup(id); e != p {
		t.Fatalf("lookup gives %p, want %p", e, p)
	}
}

// TestEmptyTable: a table of at most 0 entries refuses every Alloc.
func TestEmptyTable(t *testing.T) {
	for _, n := range []int{0, -3} {
		tb := New[int](n)
		if _, _, ok := tb.Alloc(); ok || tb.Cap() != 0 || tb.Len() != 0 {
			t.Fatalf("New(%d): alloc ok %v, cap %d, len %d", n, ok, tb.Cap(), tb.Len())
		}
	}
}

// TestSteadyStateAllocFree: once grown, Alloc, Lookup and Release
// allocate nothing.
func TestSteadyStateAllocFree(t *testing.T) {
	tb := New[[32]byte](Max)
	for range 3 * ChunkSize {
		tb.Alloc()
	}
	for i := range int32(3 * ChunkSize) {
		tb.Release(i)
	}
	n := testing.AllocsPerRun(100, func() {
		var held [3 * ChunkSize]int32
		for i := range held {
			held[i], _, _ = tb.Alloc()
		}
		for _, idx := range held {
			tb.Lookup(tb.ID(idx))
			tb.Release(idx)
		}
	})
	if n != 0 || tb.Len() != 3*ChunkSize {
		t.Fatalf("%v allocations per cycle, len %d", n, tb.Len())
	}
}

// BenchmarkAllocRelease: one Alloc, Lookup and Release with a thousand
// other entries in use, spread over several chunks.
func BenchmarkAllocRelease(b *testing.B) {
	tb := New[[64]byte](Max)
	for range 1000 {
		tb.Alloc()
	}
	b.ReportAllocs()
	for b.Loop() {
		idx, _, _ := tb.Alloc()
		tb.Lookup(tb.ID(idx))
		tb.Release(idx)
	}
}
