package vmloop

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// mapFillProg: fill(n) puts keys 0..n-1 (value = key) into a new
// map<i64,i64> and returns its length; spawner(m) spawns child with the
// map m; child(m) returns its length.
func mapFillProg(t testing.TB) *Program {
	p := &Program{Intrinsics: []Import{{Name: "map.new_i64_i64"}, {Name: "map.iput_i64"}, {Name: "map.len"}}}
	return itProg(t, p,
		mapFillFn("fill"),
		itFn("spawner", "(ref)->ref", 1, "spawn r0, 1, 2; ret r0"),
		itFn("child", "(ref)->i64", 1, "intr r0, 1, 2; ret r0"),
	)
}

// mapFillFn is function name(n): it puts keys 0..n-1 (value = key) into a
// map made by import 0 with import 1 (map.iput_i64) and returns import 2
// of the map (map.len).
func mapFillFn(name string) Function {
	return itFn(name, "(i64)->i64", 7, `
		intr r1, 0, 0
		ldi r2, 0
		loop: jge r2, r0, done
		movr r3, r1; movi r4, r2; movi r5, r2
		intr r3, 3, 1
		addi r2, r2, 1
		jmp loop
		done: movr r6, r1; intr r6, 1, 2; ret r6`)
}

// TestMapRehashIsIncremental: 10M puts into one map, run with a budget of
// 1 per Run as TestLongStepsAreChunked does, never do more than a few
// dozen reductions' worth of work between two safe points (13 measured):
// the index's
// rehashes (21 of them, the last moving a table of 16M slots into one of
// 32M) are spread over the puts. The longest Run is timed too and
// logged (not asserted: the machine may be loaded).
func TestMapRehashIsIncremental(t *testing.T) {
	if testing.Short() {
		t.Skip("10M keys")
	}
	const n = 10_000_000
	p := mapFillProg(t)
	e, err := NewExec(p, p.FuncIndex("fill"), []Value{I64(n)}, Limits{MaxHeapBytes: 2 << 30}, 1)
	require.NoError(t, err)
	defer e.Free()
	var most uint64
	var longest time.Duration
	over := 0 // Runs longer than 1 ms
	for i := 0; ; i++ {
		before := e.Reductions()
		t0 := time.Now()
		sig := e.Run(1)
		d := time.Since(t0)
		longest = max(longest, d)
		if d > time.Millisecond {
			over++
		}
		most = max(most, e.Reductions()-before)
		if sig != SigPreempted {
			require.Equal(t, SigCompleted, sig, "%v", e.Trap())
			break
		}
	}
	require.Equal(t, int64(n), e.Result().Int())
	t.Logf("10M puts: most reductions between two safe points %d; longest Run %v, %d Runs over 1 ms (the machine's load and the GC's assists); heap %d MiB",
		most, longest, over, e.HeapBytes()>>20)
	require.LessOrEqual(t, most, uint64(64), "work between two safe points")
}

// TestSpawnCopyMapBoundedSteps: a spawn whose argument is a map of 1M
// keys is copied in many steps of at most copyStep reductions' worth (plus
// one entry), and the child sees every key.
func TestSpawnCopyMapBoundedSteps(t *testing.T) {
	const n = 1_000_000
	p := mapFillProg(t)
	e, err := NewExec(p, p.FuncIndex("spawner"), []Value{Void()}, DefaultLimits, 7)
	require.NoError(t, err)
	x := e.heap.newMap(KindI64, TI64)
	m := e.heap.at(x).x.(*hmap)
	for i := range n {
		_, ok := e.heap.mapPutAcct(m, mapKey{k: uint64(i)}, uint64(i))
		require.True(t, ok)
	}
	e.setAbs(0, x, TRef)
	require.Equal(t, SigIntrinsic, e.Run(1<<20))
	child := new(Exec)
	steps, most, total := 0, int64(0), int64(0)
	more, err := child.BeginSpawn(e, DefaultLimits, 9)
	for {
		require.NoError(t, err)
		owed := e.TakeCopyCharge()
		steps++
		most, total = max(most, owed), total+owed
		if !more {
			break
		}
		more, err = child.SpawnMore(e)
	}
	require.LessOrEqual(t, most, int64(copyStep+2*mapEntryCopyCost+64))
	require.GreaterOrEqual(t, total, int64(2*n*mapEntryCopyCost))
	require.Greater(t, steps, 2*n*mapEntryCopyCost/(copyStep+64))
	require.Equal(t, SigCompleted, child.Run(100))
	require.Equal(t, int64(n), child.Result().Int())
	require.Equal(t, e.heap.at(x).size(), child.heap.bytes-0, "the copy accounts what the original does")
}

// BenchmarkMapPut: one put of a new i64 key (the fill loop of
// mapFillProg, 1M keys a run) on the Go loop.
func BenchmarkMapPut(b *testing.B) {
	p := mapFillProg(b)
	for b.Loop() {
		e, err := NewExec(p, p.FuncIndex("fill"), []Value{I64(1 << 20)}, Limits{MaxHeapBytes: 1 << 30}, 1)
		require.NoError(b, err)
		for e.Run(1<<30) == SigPreempted {
		}
		e.Free()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N<<20), "ns/put")
}

// BenchmarkMapGet: one map.iget_i64 of a present key in a map of 64
// i64 keys, on the Go loop: the lookup and the dispatch to the map
// operation, no growth (mapRun's closed set of operations, not a call
// through a function value per row, which cost about a third more here).
func BenchmarkMapGet(b *testing.B) {
	p := &Program{Intrinsics: []Import{{Name: "map.new_i64_i64"}, {Name: "map.iput_i64"}, {Name: "map.iget_i64"}}}
	p = itProg(b, p, itFn("get", "(i64)->i64", 8, `
		intr r1, 0, 0
		ldi r2, 0
		fill: ldi r7, 64; jge r2, r7, run
		movr r3, r1; movi r4, r2; movi r5, r2
		intr r3, 3, 1
		addi r2, r2, 1
		jmp fill
		run: ldi r6, 0
		loop: jge r6, r0, done
		movr r3, r1; andi r4, r6, 63
		intr r3, 2, 2
		addi r6, r6, 1
		jmp loop
		done: ret r6`))
	const n = 1 << 20
	for b.Loop() {
		e, err := NewExec(p, 0, []Value{I64(n)}, DefaultLimits, 1)
		if err != nil {
			b.Fatal(err)
		}
		for e.Run(1<<30) == SigPreempted {
		}
		e.Free()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/get")
}
