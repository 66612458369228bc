package vmloop

// The rows of the map family: one per map.* intrinsic, naming what it
// needs of the map (its key kind and value type), what its argument 1 is
// and the operation it runs. The VM loop (mapOp), the verifier's
// map-type pass (verify_map.go) and the run-time check (mapFits) read
// the row and switch on no ID, so a new map intrinsic is its row in
// centralTable plus its row here (and, for an operation no row runs yet,
// its case in mapRun); TestMapRows fails for a map.* intrinsic without
// a row, a row of an operation mapRun does not run, or a row its
// signature contradicts.

// mapArgKind is what argument 1 of a map operation is.
type mapArgKind uint8

const (
	mapArgNone   mapArgKind = iota // none the row decodes
	mapArgKey                      // a key: an i64 (key KindI64) or a string or bytes object
	mapArgCursor                   // an entry position from map.next
)

// mapOpKind is the operation a map row runs (mapRun). The operations are
// a closed set: mapRun has a case for each, and traps for any other, so
// a row of an operation it does not run fails loudly (and TestMapRows).
// A case, not a function value per row: a call through one, with the
// operation's arguments, cost a third of a map.iget_i64
// (BenchmarkMapGet).
type mapOpKind uint8

const (
	mapOpNew    mapOpKind = iota // map.new_*: an empty map of key kind key and value type val
	mapOpGet                     // the value of the key (0 if absent; map.found tells)
	mapOpPut                     // put the value of argument 2 under the key
	mapOpDel                     // delete the key: 1 if it was there
	mapOpHas                     // 1 if the key is there
	mapOpFound                   // whether the last get found its key
	mapOpLen                     // the number of entries
	mapOpNext                    // the next entry position after argument 1 (-1: none)
	mapOpKeyI64                  // the i64 key at the cursor
	mapOpKeyRef                  // the string or bytes key at the cursor (a new object)
	mapOpVal                     // the value at the cursor
	mapOpDelAt                   // delete the entry at the cursor
	numMapOps
)

// mapRow is one map intrinsic's row.
type mapRow struct {
	op mapOpKind
	// key is the key kind an operation needs of the map: KindI64, or
	// KindString for string or bytes keys (the operations do not tell
	// them apart); KindVoid for any. For mapOpNew, the new map's key
	// kind (KindI64, KindString or KindBytes).
	key Kind
	// val is the value type an operation needs of the map (TVoid: any);
	// for mapOpNew, the new map's value type.
	val Type
	// arg is what argument 1 is (mapRun decodes it).
	arg mapArgKind
}

var mapRows = map[IntrinsicID]mapRow{
	IntrMapNewI64I64:   {op: mapOpNew, key: KindI64, val: TI64},
	IntrMapNewI64F64:   {op: mapOpNew, key: KindI64, val: TF64},
	IntrMapNewI64Ref:   {op: mapOpNew, key: KindI64, val: TRef},
	IntrMapNewStrI64:   {op: mapOpNew, key: KindString, val: TI64},
	IntrMapNewStrF64:   {op: mapOpNew, key: KindString, val: TF64},
	IntrMapNewStrRef:   {op: mapOpNew, key: KindString, val: TRef},
	IntrMapNewBytesI64: {op: mapOpNew, key: KindBytes, val: TI64},
	IntrMapNewBytesF64: {op: mapOpNew, key: KindBytes, val: TF64},
	IntrMapNewBytesRef: {op: mapOpNew, key: KindBytes, val: TRef},

	IntrMapIGetI64: {op: mapOpGet, key: KindI64, val: TI64, arg: mapArgKey},
	IntrMapIGetF64: {op: mapOpGet, key: KindI64, val: TF64, arg: mapArgKey},
	IntrMapIGetRef: {op: mapOpGet, key: KindI64, val: TRef, arg: mapArgKey},
	IntrMapSGetI64: {op: mapOpGet, key: KindString, val: TI64, arg: mapArgKey},
	IntrMapSGetF64: {op: mapOpGet, key: KindString, val: TF64, arg: mapArgKey},
	IntrMapSGetRef: {op: mapOpGet, key: KindString, val: TRef, arg: mapArgKey},
	IntrMapIPutI64: {op: mapOpPut, key: KindI64, val: TI64, arg: mapArgKey},
	IntrMapIPutF64: {op: mapOpPut, key: KindI64, val: TF64, arg: mapArgKey},
	IntrMapIPutRef: {op: mapOpPut, key: KindI64, val: TRef, arg: mapArgKey},
	IntrMapSPutI64: {op: mapOpPut, key: KindString, val: TI64, arg: mapArgKey},
	IntrMapSPutF64: {op: mapOpPut, key: KindString, val: TF64, arg: mapArgKey},
	IntrMapSPutRef: {op: mapOpPut, key: KindString, val: TRef, arg: mapArgKey},
	IntrMapIDel:    {op: mapOpDel, key: KindI64, arg: mapArgKey},
	IntrMapSDel:    {op: mapOpDel, key: KindString, arg: mapArgKey},
	IntrMapIHas:    {op: mapOpHas, key: KindI64, arg: mapArgKey},
	IntrMapSHas:    {op: mapOpHas, key: KindString, arg: mapArgKey},
	IntrMapFound:   {op: mapOpFound},
	IntrMapLen:     {op: mapOpLen},
	IntrMapNext:    {op: mapOpNext},
	IntrMapKeyI64:  {op: mapOpKeyI64, key: KindI64, arg: mapArgCursor},
	IntrMapKeyRef:  {op: mapOpKeyRef, key: KindString, arg: mapArgCursor},
	IntrMapValI64:  {op: mapOpVal, val: TI64, arg: mapArgCursor},
	IntrMapValF64:  {op: mapOpVal, val: TF64, arg: mapArgCursor},
	IntrMapValRef:  {op: mapOpVal, val: TRef, arg: mapArgCursor},
	IntrMapDelAt:   {op: mapOpDelAt, arg: mapArgCursor},
}

// mapRowByID indexes mapRows by ID (one load per map operation).
var mapRowByID = indexRows(mapRows)

// mapRowOf returns id's map row, or nil.
func mapRowOf(id IntrinsicID) *mapRow { return rowOf(mapRowByID, id) }
