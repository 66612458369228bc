package vmloop

import (
	"fmt"
	"hash/maphash"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// spawnCopyProg: main(ref, i64, ref) spawns child with its three
// arguments (a window) and returns the task.
func spawnCopyProg(t *testing.T) *Program {
	return itProg(t, nil,
		itFn("main", "(ref,i64,ref)->ref", 3, "spawn r0, 3, 1; ret r0"),
		itFn("child", "(ref,i64,ref)->i64", 3, "ret r1"),
	)
}

// randomGraph builds a random acyclic object graph in h and returns its
// root: strings, errors, bytes, i64/f64 arrays, ext objects, null
// elements, ref arrays that share earlier objects (a DAG, copied once per
// reference) and, when stale is set, now and then a freed handle.
func randomGraph(r *rand.Rand, h *heap, stale bool) uint64 {
	var objs []uint64
	pick := func() uint64 {
		if len(objs) == 0 || r.Intn(8) == 0 {
			return 0
		}
		return objs[r.Intn(len(objs))]
	}
	for range 1 + r.Intn(60) {
		var x uint64
		switch r.Intn(9) {
		case 0:
			x = h.newString(string(rune('a' + r.Intn(26))))
		case 1:
			x = h.newError("IoError", "broken pipe")
		case 2:
			b := make([]byte, r.Intn(100))
			r.Read(b)
			x = h.newBytes(b)
		case 3, 4:
			k := KindArrayI64
			if r.Intn(2) == 0 {
				k = KindArrayF64
			}
			x = h.newArray(k, r.Intn(20))
			if x == 0 {
				break
			}
			for i := range h.at(x).arr() {
				h.at(x).arr()[i] = r.Uint64()
			}
		case 5:
			x = h.newExt(KindExt, r.Intn(3))
		default:
			x = h.newArray(KindArrayRef, r.Intn(12))
			if x == 0 {
				break
			}
			for i := range h.at(x).arr() {
				h.at(x).arr()[i] = pick()
			}
		}
		if x == 0 {
			break // the heap is full
		}
		if stale && r.Intn(40) == 0 {
			h.release(x) // referenced or not: a stale handle now
		}
		objs = append(objs, x)
	}
	if len(objs) > 0 && r.Intn(3) == 0 {
		if x := randomMap(r, h, pick); x != 0 {
			if stale && r.Intn(40) == 0 {
				h.release(x)
			}
			objs = append(objs, x)
		}
	}
	if len(objs) == 0 {
		return 0
	}
	return objs[len(objs)-1]
}

// randomMap makes a map of a random key kind and value type in h, with
// some keys deleted (holes in its entries) and ref values from pick (maps
// do not nest, so a map is only ever a root).
func randomMap(r *rand.Rand, h *heap, pick func() uint64) uint64 {
	key := []Kind{KindI64, KindString, KindBytes}[r.Intn(3)]
	val := []Type{TI64, TF64, TRef}[r.Intn(3)]
	x := h.newMap(key, val)
	if x == 0 {
		return 0
	}
	m := h.at(x).x.(*hmap)
	for range r.Intn(40) {
		k := mapKey{k: uint64(r.Intn(50))}
		if key != KindI64 {
			k = mapKey{s: fmt.Sprint("key", r.Intn(50))}
		}
		v := r.Uint64()
		if val == TRef {
			v = pick()
		}
		if _, ok := h.mapPutAcct(m, k, v); !ok {
			break
		}
		if r.Intn(5) == 0 {
			before := m.acct
			m.del(k)
			h.mapAcct(m, before)
		}
	}
	return x
}

// spawnCopyParent starts main with graphs of seed in its heap (limit lim)
// and runs it to its spawn request.
func spawnCopyParent(t *testing.T, p *Program, seed int64, lim int64, stale bool) *Exec {
	e, err := NewExec(p, 0, []Value{Void(), I64(seed), Void()}, Limits{MaxHeapBytes: lim}, 7)
	require.NoError(t, err)
	r := rand.New(rand.NewSource(seed))
	e.setAbs(0, randomGraph(r, &e.heap, stale), TRef)
	e.setAbs(2, randomGraph(r, &e.heap, stale), TRef)
	require.Equal(t, SigIntrinsic, e.Run(1<<20))
	require.Equal(t, SPAWN, e.Request().Op)
	return e
}

// spawnByValues is the copy a spawn made before it went heap to heap:
// each argument exported as a Value (ArgValue), then imported (Reset).
func spawnByValues(src *Exec, lim Limits) (*Exec, error) {
	f := &src.prog.Funcs[src.req.Func]
	args := make([]Value, len(f.Params))
	for i := range args {
		v, err := src.ArgValue(i)
		if err != nil {
			return nil, fmt.Errorf("vmloop: ResetSpawn: argument %d of %s: %w", i, f.Name, err)
		}
		args[i] = v
	}
	e := new(Exec)
	return e, e.Reset(src.prog, int(src.req.Func), args, lim, 9)
}

// TestSpawnCopyEqualsExportImport: on random graphs (shared sub-objects,
// stale handles, copies past the heap limit) the heap-to-heap copy of a
// spawn's arguments in steps makes exactly what exporting and importing
// them made — the same objects in the same slots, the same handles in the
// same registers — or fails with the same error.
func TestSpawnCopyEqualsExportImport(t *testing.T) {
	seed := maphash.MakeSeed() // the same for both parents' maps
	mapSeed = func() maphash.Seed { return seed }
	defer func() { mapSeed = maphash.MakeSeed }()
	p := spawnCopyProg(t)
	fails := 0
	for seed := int64(0); seed < 5000; seed++ {
		lim := int64(64 << 20)
		if seed%3 == 0 {
			lim = 4 << 10 // a DAG's copy may expand past it
		}
		stale := seed%5 == 0
		old, oldErr := spawnByValues(spawnCopyParent(t, p, seed, lim, stale), Limits{MaxHeapBytes: lim})
		src := spawnCopyParent(t, p, seed, lim, stale)
		got := new(Exec)
		more, err := got.BeginSpawn(src, Limits{MaxHeapBytes: lim}, 9)
		for err == nil && more {
			more, err = got.SpawnMore(src)
		}
		if oldErr != nil {
			fails++
			require.Error(t, err, "seed %d: the old copy failed: %v", seed, oldErr)
			require.Equal(t, oldErr.Error(), err.Error(), "seed %d", seed)
			require.Equal(t, src.Trap(), spawnCopyParent(t, p, seed, lim, stale).trapAfterArgs(t))
			continue
		}
		require.NoError(t, err, "seed %d", seed)
		require.Equal(t, old.regs, got.regs, "seed %d: handles", seed)
		require.Equal(t, old.heap.bytes, got.heap.bytes, "seed %d", seed)
		require.Equal(t, old.heap.liveObjects(), got.heap.liveObjects(), "seed %d", seed)
		require.Equal(t, len(old.heap.objs), len(got.heap.objs), "seed %d", seed)
		for i := range old.heap.objs {
			a, b := &old.heap.objs[i], &got.heap.objs[i]
			require.Equal(t, a.kind, b.kind, "seed %d object %d", seed, i)
			require.Equal(t, a.n, b.n, "seed %d object %d", seed, i)
		}
		for _, r := range []int{0, 2} {
			v1, err1 := old.heap.export(old.regs[r], 1<<40)
			v2, err2 := got.heap.export(got.regs[r], 1<<40)
			require.NoError(t, err1)
			require.NoError(t, err2)
			require.True(t, v1.Equal(v2), "seed %d argument %d", seed, r)
		}
		require.Equal(t, uint64(seed), got.regs[1]) // the scalar came across
	}
	require.Greater(t, fails, 50, "the failure cases were reached")
}

// trapAfterArgs is the trap ArgValue leaves on e after the first argument
// that fails to export (a stale handle, the limit), as the old copy did.
func (e *Exec) trapAfterArgs(t *testing.T) TrapInfo {
	for i := range e.prog.Funcs[e.req.Func].Params {
		if _, err := e.ArgValue(i); err != nil {
			return e.Trap()
		}
	}
	return e.Trap()
}

// TestSpawnCopyBoundedSteps: a spawn whose argument is a 1M-element ref
// array of strings is copied in many steps, each of at most copyStep
// reductions' worth plus one object, and owes the copy's whole charge.
func TestSpawnCopyBoundedSteps(t *testing.T) {
	const n = 1_000_000
	p := spawnCopyProg(t)
	e, err := NewExec(p, 0, []Value{Void(), I64(1), Void()}, DefaultLimits, 7)
	require.NoError(t, err)
	s := e.heap.newString("x")
	a := e.heap.newArray(KindArrayRef, n)
	for i := range e.heap.at(a).arr() {
		e.heap.at(a).arr()[i] = s
	}
	e.setAbs(0, a, TRef)
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
	// the array alone owes 2 × (32 + 8n/64) = 250,064 in its step
	require.LessOrEqual(t, most, int64(copyStep+2*(copyObjCost+charge(8*n))))
	require.GreaterOrEqual(t, total, int64(2*n*copyObjCost))
	require.GreaterOrEqual(t, steps, int(2*n*copyObjCost/(copyStep+64)), "bounded steps")
	require.Equal(t, SigCompleted, child.Run(100))
	require.Equal(t, int64(1), child.Result().Int())
	v, err := child.heap.export(child.regs[0], 1<<40)
	require.NoError(t, err)
	require.Len(t, v.arr, n)
	require.Equal(t, "x", v.arr[n-1].str)
	_, err = child.SpawnMore(e)
	require.ErrorContains(t, err, "no spawn copy under way")
}
