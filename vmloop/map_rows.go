package vmloop

import "strings"

// The rows of the map family: one per map.* intrinsic, naming what it
// needs of the map (its key kind and value type), what its argument 1 is
// and the function that runs it. The VM loop (mapOp), the verifier's
// map-type pass (verify_map.go) and the run-time check (mapFits) read
// the row and switch on no ID, so a new map intrinsic is its row in
// centralTable plus its row here; TestMapRows fails for a map.*
// intrinsic without one, or a row its signature contradicts.

// mapArgKind is what argument 1 of a map operation is.
type mapArgKind uint8

const (
	mapArgNone   mapArgKind = iota // none the row decodes
	mapArgKey                      // a key: an i64 (key KindI64) or a string or bytes object
	mapArgCursor                   // an entry position from map.next
)

// mapRow is one map intrinsic's row.
type mapRow struct {
	// makes: a map.new_*, which makes an empty map of key kind key
	// (KindI64, KindString or KindBytes) and value type val.
	makes bool
	// key is the key kind an operation needs of the map: KindI64, or
	// KindString for string or bytes keys (the operations do not tell
	// them apart); KindVoid for any.
	key Kind
	// val is the value type an operation needs of the map (TVoid: any).
	val Type
	// arg is what argument 1 is (mapArg decodes it into the call).
	arg mapArgKind
	// run does the operation (nil for makes) and returns the reductions
	// it costs beyond the lookup. The call is passed by value: through a
	// function value, a pointer to it would move it to the heap on every
	// map operation.
	run func(e *Exec, c mapCall) (int64, opStatus)
}

// mapCall is one map operation as its row's run sees it: the map that
// fits the row, argument 1 decoded, the registers and the result
// register a.
type mapCall struct {
	id     IntrinsicID
	m      *hmap
	key    mapKey    // with mapArgKey
	shared bool      // key aliases an immutable string
	cur    int64     // with mapArgCursor
	en     *mapEntry // the entry at cur
	r      regs
	a      uint8
}

var mapRows = map[IntrinsicID]mapRow{
	IntrMapNewI64I64:   {makes: true, key: KindI64, val: TI64},
	IntrMapNewI64F64:   {makes: true, key: KindI64, val: TF64},
	IntrMapNewI64Ref:   {makes: true, key: KindI64, val: TRef},
	IntrMapNewStrI64:   {makes: true, key: KindString, val: TI64},
	IntrMapNewStrF64:   {makes: true, key: KindString, val: TF64},
	IntrMapNewStrRef:   {makes: true, key: KindString, val: TRef},
	IntrMapNewBytesI64: {makes: true, key: KindBytes, val: TI64},
	IntrMapNewBytesF64: {makes: true, key: KindBytes, val: TF64},
	IntrMapNewBytesRef: {makes: true, key: KindBytes, val: TRef},

	IntrMapIGetI64: {key: KindI64, val: TI64, arg: mapArgKey, run: mapGet},
	IntrMapIGetF64: {key: KindI64, val: TF64, arg: mapArgKey, run: mapGet},
	IntrMapIGetRef: {key: KindI64, val: TRef, arg: mapArgKey, run: mapGet},
	IntrMapSGetI64: {key: KindString, val: TI64, arg: mapArgKey, run: mapGet},
	IntrMapSGetF64: {key: KindString, val: TF64, arg: mapArgKey, run: mapGet},
	IntrMapSGetRef: {key: KindString, val: TRef, arg: mapArgKey, run: mapGet},
	IntrMapIPutI64: {key: KindI64, val: TI64, arg: mapArgKey, run: (*Exec).mapPutOp},
	IntrMapIPutF64: {key: KindI64, val: TF64, arg: mapArgKey, run: (*Exec).mapPutOp},
	IntrMapIPutRef: {key: KindI64, val: TRef, arg: mapArgKey, run: (*Exec).mapPutOp},
	IntrMapSPutI64: {key: KindString, val: TI64, arg: mapArgKey, run: (*Exec).mapPutOp},
	IntrMapSPutF64: {key: KindString, val: TF64, arg: mapArgKey, run: (*Exec).mapPutOp},
	IntrMapSPutRef: {key: KindString, val: TRef, arg: mapArgKey, run: (*Exec).mapPutOp},
	IntrMapIDel:    {key: KindI64, arg: mapArgKey, run: mapDel},
	IntrMapSDel:    {key: KindString, arg: mapArgKey, run: mapDel},
	IntrMapIHas:    {key: KindI64, arg: mapArgKey, run: mapHas},
	IntrMapSHas:    {key: KindString, arg: mapArgKey, run: mapHas},
	IntrMapFound:   {run: mapFound},
	IntrMapLen:     {run: mapLen},
	IntrMapNext:    {run: mapNext},
	IntrMapKeyI64:  {key: KindI64, arg: mapArgCursor, run: mapKeyI64},
	IntrMapKeyRef:  {key: KindString, arg: mapArgCursor, run: (*Exec).mapKeyRef},
	IntrMapValI64:  {val: TI64, arg: mapArgCursor, run: mapVal},
	IntrMapValF64:  {val: TF64, arg: mapArgCursor, run: mapVal},
	IntrMapValRef:  {val: TRef, arg: mapArgCursor, run: mapVal},
	IntrMapDelAt:   {arg: mapArgCursor, run: mapDelAt},
}

// mapRowByID indexes mapRows by ID (one load per map operation).
var mapRowByID = indexRows(mapRows)

// mapRowOf returns id's map row, or nil.
func mapRowOf(id IntrinsicID) *mapRow { return rowOf(mapRowByID, id) }

func mapGet(_ *Exec, c mapCall) (int64, opStatus) {
	v, found := c.m.get(c.key)
	c.m.found = found
	c.r.set(c.a, v, c.m.val)
	return 0, opOK
}

func (e *Exec) mapPutOp(c mapCall) (int64, opStatus) {
	m := c.m
	v := c.r.get(c.a+2, m.val)
	if m.val == TRef && v != 0 {
		vo := e.heap.getLive(v)
		if vo == nil {
			e.badHandle(v, KindVoid)
			return 0, opTrap
		}
		if vo.kind == KindMap {
			e.x().trap = TrapInfo{Code: TrapHandle, Msg: intrByID[c.id].Name + ": a map cannot be a map's value (maps do not nest)"}
			return 0, opTrap
		}
	}
	key := c.key
	if m.key != KindI64 && !c.shared {
		key.s = strings.Clone(key.s) // stored: the bytes object may change
	}
	if !e.mapPut(m, key, v) {
		return 0, opTrap
	}
	return 0, opOK
}

func mapDel(_ *Exec, c mapCall) (int64, opStatus) {
	c.r.setI(c.a, b2i(c.m.del(c.key)))
	return 0, opOK
}

func mapHas(_ *Exec, c mapCall) (int64, opStatus) {
	c.r.setI(c.a, b2i(c.m.find(c.key) >= 0))
	return 0, opOK
}

func mapFound(_ *Exec, c mapCall) (int64, opStatus) {
	c.r.setI(c.a, b2i(c.m.found))
	return 0, opOK
}

func mapLen(_ *Exec, c mapCall) (int64, opStatus) {
	c.r.setI(c.a, int64(c.m.live))
	return 0, opOK
}

func mapNext(_ *Exec, c mapCall) (int64, opStatus) {
	pos, skipped := c.m.next(int(max(c.r.i(c.a+1), -1)))
	c.r.setI(c.a, int64(pos))
	return int64(skipped), opOK
}

func mapKeyI64(_ *Exec, c mapCall) (int64, opStatus) {
	c.r.setI(c.a, int64(c.en.k))
	return 0, opOK
}

func (e *Exec) mapKeyRef(c mapCall) (int64, opStatus) {
	h := &e.heap
	s := *c.m.str(int(c.cur))
	cost := charge(int64(len(s)))
	var x uint64
	if c.m.key == KindString {
		x = h.newString(s)
	} else {
		x = h.newBytes([]byte(s))
	}
	if x == 0 {
		e.x().trap = h.allocFail(objSize(s, "", 0, 0))
		return cost, opTrap
	}
	c.r.setRef(c.a, x)
	return cost, opOK
}

func mapVal(_ *Exec, c mapCall) (int64, opStatus) {
	c.r.set(c.a, c.en.v, c.m.val)
	return 0, opOK
}

func mapDelAt(_ *Exec, c mapCall) (int64, opStatus) {
	c.m.del(c.m.keyAt(int(c.cur)))
	return 0, opOK
}
