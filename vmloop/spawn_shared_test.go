package vmloop

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSpawnSharedEqualsCopy: a spawn whose reference arguments are null,
// event or task references (or a stale one) is taken by spawnShared, and
// the child gets what the copy in steps gives it: the same objects under
// references of the same kinds, the same bytes, the same reductions owed
// by the spawner, or the same error.
func TestSpawnSharedEqualsCopy(t *testing.T) {
	// Six references: their holds owe more than a request's flat cost
	// covers (copyFree), so the charge is compared too.
	p := itProg(t, nil,
		itFn("main", "(ref,ref,ref,ref,ref,ref,i64)->ref", 7, "spawn r0, 7, 1; ret r0"),
		itFn("child", "(ref,ref,ref,ref,ref,ref,i64)->i64", 7, "ret r6"),
	)
	const nref = 6
	ev, task := new(int), new(int)
	type arg struct {
		kind  Kind // KindVoid: null
		stale bool
	}
	ok, null := arg{KindEvent, false}, arg{KindVoid, false}
	tk := arg{KindTask, false}
	cases := [][nref]arg{
		{ok, null, tk, ok, tk, ok},
		{tk, ok, tk, tk, ok, ok},
		{null, null, null, null, null, null},
		{ok, ok, tk, ok, {KindEvent, true}, ok},
		{{KindTask, true}, ok, null, ok, tk, ok},
	}
	parent := func(c [nref]arg) *Exec {
		e, err := NewExec(p, 0, []Value{Void(), Void(), Void(), Void(), Void(), Void(), I64(5)}, Limits{MaxHeapBytes: 1 << 20}, 7)
		require.NoError(t, err)
		for i, a := range c {
			var x uint64
			switch a.kind {
			case KindEvent:
				x, err = e.heap.importShared(KindEvent, ev)
			case KindTask:
				x, err = e.heap.importShared(KindTask, task)
			}
			require.NoError(t, err)
			if a.stale {
				require.True(t, e.heap.release(x))
			}
			e.setAbs(i, x, TRef)
		}
		require.Equal(t, SigIntrinsic, e.Run(1<<20))
		require.Equal(t, SPAWN, e.Request().Op)
		return e
	}
	for n, c := range cases {
		src := parent(c)
		got := new(Exec)
		more, err := got.BeginSpawn(src, Limits{MaxHeapBytes: 1 << 20}, 9)
		require.False(t, more)

		// The copy in steps, as BeginSpawn made it before spawnShared.
		src2 := parent(c)
		want := new(Exec)
		f, err2 := want.start(src2.prog, int(src2.req.Func), int(src2.req.NArgs), Limits{MaxHeapBytes: 1 << 20}, 9)
		require.NoError(t, err2)
		cp := spawnCopy{f: f, argWindow: argWindow{r0: src2.frames[src2.fp].base + int(src2.req.Base), win: true}}
		want.setAbs(nref, src2.getAbs(cp.reg(nref), TI64), TI64)
		work, err2 := want.spawnStep(src2, &cp)
		src2.owe(work.owed)
		require.True(t, work.done || err2 != nil)

		if err2 != nil {
			// The same message but for the reference's value (its slot
			// of the shared table differs between the two parents).
			require.Error(t, err, "case %d", n)
			hex := regexp.MustCompile(`0x[0-9a-f]+`)
			require.Equal(t, hex.ReplaceAllString(err2.Error(), "0x"), hex.ReplaceAllString(err.Error(), "0x"), "case %d", n)
			continue
		}
		require.NoError(t, err, "case %d", n)
		owed := src2.TakeCopyCharge()
		require.Equal(t, owed, src.TakeCopyCharge(), "case %d: owed", n)
		require.Equal(t, want.heap.bytes, got.heap.bytes, "case %d", n)
		require.Equal(t, want.regs[nref], got.regs[nref])
		for r := range nref {
			x, y := want.regs[r], got.regs[r]
			require.Equal(t, x == 0, y == 0, "case %d register %d", n, r)
			if x == 0 {
				continue
			}
			require.Equal(t, refKind(x), refKind(y), "case %d register %d", n, r)
			require.Same(t, want.heap.ref(x).obj, got.heap.ref(y).obj, "case %d register %d", n, r)
		}
		if n == 0 {
			require.Positive(t, owed, "the holds are owed")
		}
	}
}
