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

// mapKeyName is how a trap names a map's key kind.
func mapKeyName(k Kind) string {
	if k == KindI64 {
		return "i64"
	}
	return "string or bytes"
}

// mapFits checks that the operation of row fits map m (its key kind and
// value type), and sets the trap when it does not.
func (e *Exec) mapFits(id IntrinsicID, row *mapRow, m *hmap) bool {
	if row.key != KindVoid && (row.key == KindI64) != (m.key == KindI64) {
		e.x().trap = TrapInfo{Code: TrapKind, Msg: fmt.Sprintf("%s on a map of %s keys (%s)", intrByID[id].Name, mapKeyName(m.key), m.typeName())}
		return false
	}
	if row.val != TVoid && row.val != m.val {
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
// a..a+C-1, result in a) by its row (map_rows.go) and returns the budget
// left and its status. An ID without a row traps (TestMapRows keeps every
// map.* intrinsic a row).
func (e *Exec) mapOp(id IntrinsicID, ins Instr, r regs, left int64) (int64, opStatus) {
	h := &e.heap
	a := ins.A()
	row := mapRowOf(id)
	if row == nil {
		e.x().trap = TrapInfo{Code: TrapIntrinsic, Msg: "no in-VM implementation of " + intrByID[id].Name}
		return left, opTrap
	}
	if row.op == mapOpNew {
		x := h.newMap(row.key, row.val)
		if x == 0 {
			e.x().trap = h.allocFail(objHeader + mapMinSlots*mapSlotBytes)
			return left, opTrap
		}
		r.setRef(a, x)
		return left, opOK
	}
	m, _ := e.mapOf(r.ref(a))
	if m == nil || !e.mapFits(id, row, m) {
		return left, opTrap
	}
	moved, acct := m.moved, m.acct
	left, st := e.mapRun(id, row, m, r, a, left)
	left -= mapOpCost + int64(m.moved-moved)
	h.mapAcct(m, acct) // a put's growth (mapPutAcct checked it fits), a delete's key bytes, an old index freed
	return left, st
}

// mapRun runs the operation of row on the map m, which fits it: it
// decodes argument 1 as the row says (a key, charged by its bytes, or a
// cursor) and does the row's operation.
func (e *Exec) mapRun(id IntrinsicID, row *mapRow, m *hmap, r regs, a uint8, left int64) (int64, opStatus) {
	var key mapKey
	var en *mapEntry
	var cur int64
	shared := false
	switch row.arg {
	case mapArgKey:
		if row.key == KindI64 {
			key.k = uint64(r.i(a + 1))
			break
		}
		var ok bool
		if key, shared, ok = e.refKey(r.ref(a + 1)); !ok {
			return left, opTrap
		}
		left -= charge(int64(len(key.s)))
	case mapArgCursor:
		cur = r.i(a + 1)
		if en = m.at(cur); en == nil {
			e.x().trap = TrapInfo{Code: TrapBounds, Msg: fmt.Sprintf("%s: no entry at cursor %d (of %d positions)", intrByID[id].Name, cur, m.top)}
			return left, opTrap
		}
	}
	switch row.op {
	case mapOpGet:
		v, found := m.get(key)
		m.found = found
		r.set(a, v, m.val)
	case mapOpPut:
		return left, e.mapPutOp(id, m, key, shared, r.get(a+2, m.val))
	case mapOpDel:
		r.setI(a, b2i(m.del(key)))
	case mapOpHas:
		r.setI(a, b2i(m.find(key) >= 0))
	case mapOpFound:
		r.setI(a, b2i(m.found))
	case mapOpLen:
		r.setI(a, int64(m.live))
	case mapOpNext:
		pos, skipped := m.next(int(max(r.i(a+1), -1)))
		left -= int64(skipped)
		r.setI(a, int64(pos))
	case mapOpKeyI64:
		r.setI(a, int64(en.k))
	case mapOpKeyRef:
		s := *m.str(int(cur))
		left -= charge(int64(len(s)))
		var x uint64
		if m.key == KindString {
			x = e.heap.newString(s)
		} else {
			x = e.heap.newBytes([]byte(s))
		}
		if x == 0 {
			e.x().trap = e.heap.allocFail(objSize(s, "", 0, 0))
			return left, opTrap
		}
		r.setRef(a, x)
	case mapOpVal:
		r.set(a, en.v, m.val)
	case mapOpDelAt:
		m.del(m.keyAt(int(cur)))
	default:
		e.x().trap = TrapInfo{Code: TrapIntrinsic, Msg: fmt.Sprintf("no in-VM implementation of %s (map operation %d)", intrByID[id].Name, row.op)}
		return left, opTrap
	}
	return left, opOK
}

// mapPutOp puts v under key into m: a ref value is a live object and no
// map (maps do not nest); a key of string or bytes is cloned unless it
// aliases an immutable string (shared).
func (e *Exec) mapPutOp(id IntrinsicID, m *hmap, key mapKey, shared bool, v uint64) opStatus {
	if m.val == TRef && v != 0 {
		vo := e.heap.getLive(v)
		if vo == nil && e.heap.ref(v) == nil {
			e.badHandle(v, KindVoid)
			return opTrap
		}
		if vo != nil && vo.kind == KindMap {
			e.x().trap = TrapInfo{Code: TrapHandle, Msg: intrByID[id].Name + ": a map cannot be a map's value (maps do not nest)"}
			return opTrap
		}
	}
	if m.key != KindI64 && !shared {
		key.s = strings.Clone(key.s) // stored: the bytes object may change
	}
	if !e.mapPut(m, key, v) {
		return opTrap
	}
	return opOK
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
