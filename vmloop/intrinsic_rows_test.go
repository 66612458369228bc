package vmloop

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// mapRowProblems lists the map.* intrinsics of the central table without
// a complete map row, and the rows their signature contradicts: a
// map.new_* takes nothing and returns the map; every other operation
// takes the map first and has a run; a key argument is an i64 for i64
// keys and a string or bytes object otherwise; a cursor is an i64; a
// value type the row needs is the result (a get or a cursor read) or the
// value argument (a put).
func mapRowProblems() []string {
	var bad []string
	for _, in := range centralTable {
		row := mapRowOf(in.ID)
		if FamilyOf(in.ID) != FamMap {
			if row != nil {
				bad = append(bad, in.Name+": a map row for an intrinsic outside map.*")
			}
			continue
		}
		if row == nil {
			bad = append(bad, in.Name+": no map row (map_rows.go)")
			continue
		}
		if row.op >= numMapOps {
			bad = append(bad, fmt.Sprintf("%s: map operation %d, which mapRun does not run", in.Name, row.op))
			continue
		}
		if row.op == mapOpNew {
			if len(in.Params) != 0 || in.Result != TRef || row.val == TVoid || row.key == KindVoid {
				bad = append(bad, in.Name+": a map.new_* row that is not (no params) -> ref of a key kind and value type")
			}
			continue
		}
		if len(in.Params) == 0 || in.Params[0] != TRef {
			bad = append(bad, in.Name+": an operation without the map as argument 0")
			continue
		}
		switch row.arg {
		case mapArgKey:
			want := TRef
			if row.key == KindI64 {
				want = TI64
			}
			if row.key == KindVoid || len(in.Params) < 2 || in.Params[1] != want {
				bad = append(bad, fmt.Sprintf("%s: a key argument that is not the %s its row's key kind needs", in.Name, want))
			}
		case mapArgCursor:
			if len(in.Params) < 2 || in.Params[1] != TI64 {
				bad = append(bad, in.Name+": a cursor argument that is not an i64")
			}
		}
		if row.val != TVoid && in.Result != row.val && (len(in.Params) < 3 || in.Params[2] != row.val) {
			bad = append(bad, fmt.Sprintf("%s: needs %s values but neither returns nor takes one", in.Name, row.val))
		}
	}
	return bad
}

// TestMapRows: every map.* intrinsic is a map row its signature agrees
// with, and no other intrinsic has one.
func TestMapRows(t *testing.T) {
	require.Empty(t, mapRowProblems())
}

// TestChanRows: every chan.* or sel.* intrinsic named for an element type
// (the _i64, _f64 and _ref forms) has a channel row of that type, and no
// other intrinsic has one; a chan.new_* row makes a channel (returns a
// ref), and the argument a row names as the channel is a ref.
func TestChanRows(t *testing.T) {
	suffix := map[string]Type{"_i64": TI64, "_f64": TF64, "_ref": TRef}
	for _, in := range centralTable {
		row := chanRowOf(in.ID)
		fam := FamilyOf(in.ID)
		want, typed := suffix[in.Name[max(len(in.Name)-4, 0):]]
		if typed = typed && (fam == FamChan || fam == FamSel); !typed {
			require.Nil(t, row, "%s: a channel row for an intrinsic of no element type", in.Name)
			continue
		}
		require.NotNil(t, row, "%s: a typed channel intrinsic without a channel row (chan_rows.go)", in.Name)
		require.Equal(t, want, row.elem, in.Name)
		require.Equal(t, want, in.Elem(), in.Name)
		if row.makes {
			require.Equal(t, TRef, in.Result, "%s makes a channel", in.Name)
			require.Equal(t, int8(-1), row.chanArg, in.Name)
		}
		if row.chanArg >= 0 {
			require.Less(t, int(row.chanArg), len(in.Params), in.Name)
			require.Equal(t, TRef, in.Params[row.chanArg], "%s: its channel argument is not a ref", in.Name)
		}
	}
}

// withTestRow appends in to the central table, and mr (if not nil) to
// the map rows, for the rest of the test, and reindexes both.
func withTestRow(t *testing.T, in Intrinsic, mr *mapRow) {
	t.Helper()
	table := centralTable
	centralTable = append(table[:len(table):len(table)], in)
	if mr != nil {
		mapRows[in.ID] = *mr
	}
	indexIntrinsics()
	mapRowByID = indexRows(mapRows)
	t.Cleanup(func() {
		centralTable = table
		delete(mapRows, in.ID)
		indexIntrinsics()
		mapRowByID = indexRows(mapRows)
	})
}

// TestTestRowIsKnownEverywhere: an intrinsic is its rows. A test-only
// map.probe appended to the central table (the next ID, as a new
// intrinsic would be) is found by name and ID, classified by its family,
// typed by the verifier from its row and listed in docs/ISA.md's table;
// with no map row, or a row of an operation the loop does not run, it is
// reported by the coverage check and traps when run (never a silent
// no-op); with its map row (the length of a map of i64 keys: the
// verifier refuses it on a map of string keys) the VM loop runs it as
// its row says. Nothing else is edited.
func TestTestRowIsKnownEverywhere(t *testing.T) {
	last := centralTable[len(centralTable)-1].ID
	probe := Intrinsic{ID: last + 1, Name: "map.probe", Params: []Type{TRef}, Result: TI64, Since: ABI, Builtin: NOP, IntrOK: true}
	withTestRow(t, probe, nil)

	in, ok := LookupIntrinsic("map.probe")
	require.True(t, ok)
	require.Equal(t, probe.ID, in.ID)
	byID, ok := IntrinsicByID(probe.ID)
	require.True(t, ok)
	require.Same(t, in, byID)
	require.Equal(t, FamMap, in.Family())
	require.True(t, in.Family().InVM())
	row := fmt.Sprintf("| %d | `map.probe` | ref | i64 | %s | — | yes |\n", probe.ID, ABI)
	require.True(t, strings.HasSuffix(IntrinsicTable(), row), "the docs table lists the new row last:\n%s", row)
	require.Contains(t, mapRowProblems(), "map.probe: no map row (map_rows.go)")

	imports := func() *Program {
		return &Program{Intrinsics: []Import{{Name: "map.new_i64_i64"}, {Name: "map.iput_i64"}, {Name: "map.probe"}, {Name: "map.new_str_i64"}}}
	}
	count := mapFillFn("count") // its import 2 is map.probe
	// Without its map row: the loop traps at the call.
	p := itProg(t, imports(), count)
	sig, e := itCall(t, p, "count", I64(3))
	require.Equal(t, SigTrapped, sig)
	require.Equal(t, TrapIntrinsic, e.Trap().Code)
	require.Contains(t, e.Trap().Msg, "no in-VM implementation of map.probe")

	// A row of an operation mapRun does not run: reported, and a trap.
	mapRows[probe.ID] = mapRow{op: numMapOps, key: KindI64}
	mapRowByID = indexRows(mapRows)
	require.Equal(t, []string{fmt.Sprintf("map.probe: map operation %d, which mapRun does not run", numMapOps)}, mapRowProblems())
	sig, e = itCall(t, p, "count", I64(3))
	require.Equal(t, SigTrapped, sig)
	require.Contains(t, e.Trap().Msg, "no in-VM implementation of map.probe")

	// With its row: run as the row says.
	mapRows[probe.ID] = mapRow{op: mapOpLen, key: KindI64}
	mapRowByID = indexRows(mapRows)
	require.Empty(t, mapRowProblems())
	p = itProg(t, imports(), count)
	sig, e = itCall(t, p, "count", I64(3))
	require.Equal(t, SigCompleted, sig, "%v", e.Trap())
	require.Equal(t, int64(3), e.Result().Int())

	// The verifier types it from its row: its parameter is a ref, and the
	// row's i64 keys refuse a map of string keys.
	bad := &Program{ABI: ABI, Intrinsics: imports().Intrinsics, Funcs: []Function{
		itFn("f", "(i64)->i64", 1, "intr r0, 1, 2; ret r0")}}
	err := Verify(bad, nil)
	require.ErrorContains(t, err, "intr map.probe, argument 0: r0 is read as ref but holds i64")
	bad = &Program{ABI: ABI, Intrinsics: imports().Intrinsics, Funcs: []Function{
		itFn("f", "()->i64", 1, "intr r0, 0, 3; intr r0, 1, 2; ret r0")}}
	err = Verify(bad, nil)
	require.Error(t, err)
	require.Contains(t, err.Error(), "intr map.probe: r0 holds a map of string or bytes keys")
}

// TestTestRowIsARequest: a test-only task.probe appended to the central
// table (outside the VM loop's families) leaves the loop as a request
// that names its row, with its argument typed by the row: what the bus's
// dispatcher reads (its command row is looked up by the request's ID;
// bus.TestCommandCoverageFindsGaps shows an intrinsic without one is
// reported).
func TestTestRowIsARequest(t *testing.T) {
	last := centralTable[len(centralTable)-1].ID
	withTestRow(t, Intrinsic{ID: last + 1, Name: "task.probe", Params: []Type{TF64}, Result: TI64, Since: ABI, Builtin: NOP, IntrOK: true}, nil)
	in, ok := LookupIntrinsic("task.probe")
	require.True(t, ok)
	require.Equal(t, FamTask, in.Family())
	require.False(t, in.Family().InVM())

	p := itProg(t, &Program{Intrinsics: []Import{{Name: "task.probe"}}},
		itFn("main", "(f64)->i64", 1, "intr r0, 1, 0; ret r0"))
	e := itStart(t, p, "main", F64(2.5))
	require.Equal(t, SigIntrinsic, e.Run(1000))
	req := e.Request()
	require.Same(t, in, req.Intr, "the request names the row")
	require.Equal(t, 2.5, e.ArgF64(0))
	require.NoError(t, e.Complete(I64(7)))
	require.Equal(t, SigCompleted, e.Run(1000))
	require.Equal(t, int64(7), e.Result().Int())

	bad := &Program{ABI: ABI, Intrinsics: []Import{{Name: "task.probe"}}, Funcs: []Function{
		itFn("main", "(i64)->i64", 1, "intr r0, 1, 0; ret r0")}}
	require.ErrorContains(t, Verify(bad, nil), "intr task.probe, argument 0: r0 is read as f64 but holds i64")
}
