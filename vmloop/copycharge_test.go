package vmloop

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCopyAcrossBoundaryCharged: the arguments of a spawn exported from the
// spawner's heap and imported into the child's, and a large value imported
// by Complete (a joined result), are owed to the requesting task by their
// size (copyObjCost per object, both ways), counted in its Reductions when
// the scheduler takes them; a small copy owes nothing beyond the request's
// flat cost. They used to cost a spawn's flat charge whatever the size.
func TestCopyAcrossBoundaryCharged(t *testing.T) {
	const n = 100_000
	p := itProg(t, nil,
		itFn("main", "(ref)->ref", 2, "movr r1, r0; spawn r0, 1, 1; ret r0"),
		itFn("child", "(ref)->i64", 2, "alen r1, r0; ret r1"),
		itFn("joinr", "(ref)->ref", 2, "joinr r1, r0; ret r1"),
	)
	big := refTree(t, 1, n) // one array of n null elements...
	elems := make([]Value, n)
	for i := range elems {
		elems[i] = Str("x") // ...and one of n strings
	}
	strs, err := Array(KindArrayRef, elems...)
	require.NoError(t, err)
	for _, c := range []struct {
		name string
		arg  Value
		min  int64
	}{
		{"strings", strs, 2 * n * copyObjCost},
		{"wide", big, 2 * charge(8*n)},
		{"small", Str("x"), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			parent := itStart(t, p, "main", c.arg)
			require.Equal(t, SigIntrinsic, parent.Run(1<<20))
			require.Equal(t, SPAWN, parent.Request().Op)
			before := parent.Reductions()
			child := new(Exec)
			require.NoError(t, child.ResetSpawn(parent, DefaultLimits, 9))
			owed := parent.TakeCopyCharge()
			require.GreaterOrEqual(t, owed, c.min, "charged by size")
			if c.min == 0 {
				require.Zero(t, owed, "a small copy is covered by the flat cost")
			}
			require.Equal(t, before+uint64(owed), parent.Reductions())
			require.Zero(t, parent.TakeCopyCharge(), "taken once")
			require.Zero(t, child.TakeCopyCharge(), "the child owes nothing: its spawner's worker copied")
		})
	}

	// a joined result imported by Complete
	joiner := itStart(t, p, "joinr", Void())
	require.Equal(t, SigIntrinsic, joiner.Run(1<<20))
	require.NoError(t, joiner.Complete(strs))
	require.GreaterOrEqual(t, joiner.TakeCopyCharge(), int64(n*copyObjCost))
}
