package vmloop

import (
	"fmt"
	"strings"
	"unsafe"
)

// The map intrinsics (ABI 1.6), run by the VM loop itself: INTR of a
// map.* intrinsic never becomes a Request (Family.InVM), so a map
// operation costs what its work costs and no trip to the scheduler.
//
// Each costs, beside the INTR instruction's own reduction, mapOpCost (the
// lookup: 1–2 index slots with the seeded hash, on average), one per slot
// of the old index a put's share of a rehash moves (mapMigration.step, at
// most 4), ⌈len/64⌉ for a string or bytes key's bytes, and for map.next
// one per chunk of 256 free positions it skips; map.key_ref the key's
// bytes. The lookup's charge is flat, not the slots it looks at: where a
// key lands depends on the map's random seed, and a task's reductions
// must not (the Go and C loops run in lockstep: native's TestMapDiff);
// the moves start and end at the same operation whatever the seed
// (mapIndex.fill). The slots a lookup looks at are bounded
// (TestMapPutIsBounded, TestMapFloodingIsLinear).
const mapOpCost = 2

// mapNewKinds gives the key kind and value type of each map.new_*.
var mapNewKinds = map[IntrinsicID]struct {
	key Kind
	val Type
}{
	IntrMapNewI64I64: {KindI64, TI64}, IntrMapNewI64F64: {KindI64, TF64}, IntrMapNewI64Ref: {KindI64, TRef},
	IntrMapNewStrI64: {KindString, TI64}, IntrMapNewStrF64: {KindString, TF64}, IntrMapNewStrRef: {KindString, TRef},
	IntrMapNewBytesI64: {KindBytes, TI64}, IntrMapNewBytesF64: {KindBytes, TF64}, IntrMapNewBytesRef: {KindBytes, TRef},
}

// newMap makes an empty map object (0: the heap is full).
func (h *heap) newMap(key Kind, val Type) uint64 {
	m := newHmap(key, val)
	x := h.alloc(KindMap, m.acct)
	if x != 0 {
		h.at(x).x = m
	}
	return x
}

// mapOf returns the map named by handle x, or nil (e.x().trap set).
func (e *Exec) mapOf(x uint64) (*hmap, *object) {
	o := e.heap.get(x, KindMap)
	if o == nil {
		e.badHandle(x, KindMap)
		return nil, nil
	}
	return o.x.(*hmap), o
}

// mapIntrKey says what key an operation takes (KindI64 for the i-forms,
// KindString for the s-forms, KindVoid: none) and what value type
// (TVoid: any).
func mapIntrKey(id IntrinsicID) (Kind, Type) {
	switch id {
	case IntrMapIGetI64, IntrMapIPutI64:
		return KindI64, TI64
	case IntrMapIGetF64, IntrMapIPutF64:
		return KindI64, TF64
	case IntrMapIGetRef, IntrMapIPutRef:
		return KindI64, TRef
	case IntrMapSGetI64, IntrMapSPutI64:
		return KindString, TI64
	case IntrMapSGetF64, IntrMapSPutF64:
		return KindString, TF64
	case IntrMapSGetRef, IntrMapSPutRef:
		return KindString, TRef
	case IntrMapIDel, IntrMapIHas, IntrMapKeyI64:
		return KindI64, TVoid
	case IntrMapSDel, IntrMapSHas, IntrMapKeyRef:
		return KindString, TVoid
	case IntrMapValI64:
		return KindVoid, TI64
	case IntrMapValF64:
		return KindVoid, TF64
	case IntrMapValRef:
		return KindVoid, TRef
	}
	return KindVoid, TVoid
}

// mapKeyName is how a trap names a map's key kind.
func mapKeyName(k Kind) string {
	if k == KindI64 {
		return "i64"
	}
	return "string or bytes"
}

// mapFits checks that the operation id fits map m (its key kind and value
// type), and sets the trap when it does not.
func (e *Exec) mapFits(id IntrinsicID, m *hmap) bool {
	key, val := mapIntrKey(id)
	if key != KindVoid && (key == KindI64) != (m.key == KindI64) {
		e.x().trap = TrapInfo{Code: TrapKind, Msg: fmt.Sprintf("%s on a map of %s keys (%s)", intrByID[id].Name, mapKeyName(m.key), m.typeName())}
		return false
	}
	if val != TVoid && val != m.val {
		e.x().trap = TrapInfo{Code: TrapKind, Msg: fmt.Sprintf("%s on a map of %s values (%s)", intrByID[id].Name, m.val, m.typeName())}
		return false
	}
	return true
}

// typeName is the map's type as map.new_* names it ("map<string,i64>").
func (m *hmap) typeName() string {
	k := "i64"
	switch m.key {
	case KindString:
		k = "string"
	case KindBytes:
		k = "bytes"
	}
	return "map<" + k + "," + m.val.String() + ">"
}

// refKey reads a string or bytes key from the handle x (aliasing its
// object: a put clones it unless it is an immutable string).
func (e *Exec) refKey(x uint64) (mapKey, bool, bool) {
	o := e.heap.getLive(x)
	if o == nil || o.kind != KindString && o.kind != KindBytes {
		if o == nil {
			e.badHandle(x, KindString)
		} else {
			e.x().trap = TrapInfo{Code: TrapHandle, Msg: "wrong kind: a map key is a string or bytes, got " + o.kind.String()}
		}
		return mapKey{}, false, false
	}
	var s string
	if o.kind == KindString {
		s = o.str()
	} else {
		b := o.bytes()
		s = unsafe.String(unsafe.SliceData(b), len(b))
	}
	if len(s) > mapMaxKey {
		e.x().trap = TrapInfo{Code: TrapBounds, Msg: fmt.Sprintf("map key of %d bytes (at most %d)", len(s), mapMaxKey)}
		return mapKey{}, false, false
	}
	return mapKey{s: s}, o.kind == KindString, true
}

// mapOp runs the map intrinsic id of the INTR instruction ins (window
// a..a+C-1, result in a) and returns the budget left and its status.
func (e *Exec) mapOp(id IntrinsicID, ins Instr, r regs, left int64) (int64, opStatus) {
	h := &e.heap
	a := ins.A()
	if id <= IntrMapNewBytesRef {
		nk := mapNewKinds[id]
		x := h.newMap(nk.key, nk.val)
		if x == 0 {
			e.x().trap = h.allocFail(objHeader + mapMinSlots*mapSlotBytes)
			return left, opTrap
		}
		r.setRef(a, x)
		return left, opOK
	}
	m, _ := e.mapOf(r.ref(a))
	if m == nil || !e.mapFits(id, m) {
		return left, opTrap
	}
	moved, acct := m.moved, m.acct
	left, st := e.mapRun(id, m, ins, r, left)
	left -= mapOpCost + int64(m.moved-moved)
	h.mapAcct(m, acct) // a put's growth (mapPutAcct checked it fits), a delete's key bytes, an old index freed
	return left, st
}

// mapRun is mapOp on the map m, which fits the operation.
func (e *Exec) mapRun(id IntrinsicID, m *hmap, ins Instr, r regs, left int64) (int64, opStatus) {
	h := &e.heap
	a := ins.A()
	var key mapKey
	shared := false
	switch id {
	case IntrMapIGetI64, IntrMapIGetF64, IntrMapIGetRef, IntrMapIPutI64, IntrMapIPutF64, IntrMapIPutRef, IntrMapIDel, IntrMapIHas:
		key.k = uint64(r.i(a + 1))
	case IntrMapSGetI64, IntrMapSGetF64, IntrMapSGetRef, IntrMapSPutI64, IntrMapSPutF64, IntrMapSPutRef, IntrMapSDel, IntrMapSHas:
		var ok bool
		if key, shared, ok = e.refKey(r.ref(a + 1)); !ok {
			return left, opTrap
		}
		left -= charge(int64(len(key.s)))
	}
	switch id {
	case IntrMapIGetI64, IntrMapIGetF64, IntrMapIGetRef, IntrMapSGetI64, IntrMapSGetF64, IntrMapSGetRef:
		v, found := m.get(key)
		m.found = found
		r.set(a, v, m.val)
	case IntrMapIPutI64, IntrMapIPutF64, IntrMapIPutRef, IntrMapSPutI64, IntrMapSPutF64, IntrMapSPutRef:
		v := r.get(a+2, m.val)
		if m.val == TRef && v != 0 {
			vo := h.getLive(v)
			if vo == nil && h.taskRef(v) == nil {
				e.badHandle(v, KindVoid)
				return left, opTrap
			}
			if vo != nil && vo.kind == KindMap {
				e.x().trap = TrapInfo{Code: TrapHandle, Msg: intrByID[id].Name + ": a map cannot be a map's value (maps do not nest)"}
				return left, opTrap
			}
		}
		if m.key != KindI64 && !shared {
			key.s = strings.Clone(key.s) // stored: the bytes object may change
		}
		if !e.mapPut(m, key, v) {
			return left, opTrap
		}
	case IntrMapIDel, IntrMapSDel:
		r.setI(a, b2i(m.del(key)))
	case IntrMapIHas, IntrMapSHas:
		r.setI(a, b2i(m.find(key) >= 0))
	case IntrMapFound:
		r.setI(a, b2i(m.found))
	case IntrMapLen:
		r.setI(a, int64(m.live))
	case IntrMapNext:
		pos, skipped := m.next(int(max(r.i(a+1), -1)))
		left -= int64(skipped)
		r.setI(a, int64(pos))
	default: // the cursor reads and del_at
		return e.mapAt(id, m, r, a, left)
	}
	return left, opOK
}

// mapPut puts key and v into m, within the heap limit and the engine's
// budget (a put that would pass either traps and changes nothing). mapOp
// accounts what m grew by.
func (e *Exec) mapPut(m *hmap, key mapKey, v uint64) bool {
	if need, ok := e.heap.mapRoom(m, key); !ok {
		e.x().trap = e.heap.allocFail(need)
		return false
	}
	m.put(key, v)
	return true
}

// mapAt runs the intrinsics that take a cursor (an entry position from
// map.next): map.key_*, map.val_* and map.del_at.
func (e *Exec) mapAt(id IntrinsicID, m *hmap, r regs, a uint8, left int64) (int64, opStatus) {
	h := &e.heap
	cur := r.i(a + 1)
	en := m.at(cur)
	if en == nil {
		e.x().trap = TrapInfo{Code: TrapBounds, Msg: fmt.Sprintf("%s: no entry at cursor %d (of %d positions)", intrByID[id].Name, cur, m.top)}
		return left, opTrap
	}
	switch id {
	case IntrMapKeyI64:
		r.setI(a, int64(en.k))
	case IntrMapKeyRef:
		var x uint64
		s := *m.str(int(cur))
		left -= charge(int64(len(s)))
		if m.key == KindString {
			x = h.newString(s)
		} else {
			x = h.newBytes([]byte(s))
		}
		if x == 0 {
			e.x().trap = h.allocFail(objSize(s, "", 0, 0))
			return left, opTrap
		}
		r.setRef(a, x)
	case IntrMapValI64, IntrMapValF64, IntrMapValRef:
		r.set(a, en.v, m.val)
	case IntrMapDelAt:
		m.del(m.keyAt(int(cur)))
	}
	return left, opOK
}
