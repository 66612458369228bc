package vmloop

import (
	"fmt"
	"strings"
)

// Maps across the heap boundary. A map is a mutable object of its task's
// heap, so it crosses a boundary (a spawn argument, a join result, a
// channel message, a host value) as arrays do: copied, with its ref
// values copied deep, never shared. As a Value it is KindMap with its key
// kind and value type in bits and its entries in arr as pairs (key,
// value), in the map's iteration order: an i64, string or bytes key and
// an i64, f64 or ref value (void for null). A map is never a value of a
// map or an element of an array (maps do not nest; heaps stay acyclic
// without a walk at every put), so its ref values are strings, bytes,
// arrays, errors, tasks, events and host objects.

// mapEntryCopyCost is the reductions one entry costs to copy across the
// heap boundary (read, hashed and put), beside ⌈n/64⌉ for its key's bytes.
const mapEntryCopyCost = 4

// Map makes a map value of key kind key (KindI64, KindString or KindBytes)
// and value type val (TI64, TF64 or TRef) from pairs of keys and values.
// Keys must be of the key kind and distinct; values of the value type (a
// reference kind or void for TRef, but not a map).
func Map(key Kind, val Type, pairs ...Value) (Value, error) {
	if key != KindI64 && key != KindString && key != KindBytes || val != TI64 && val != TF64 && val != TRef {
		return Value{}, fmt.Errorf("vmloop: map: no map of %s keys and %s values", key, val)
	}
	if len(pairs)%2 != 0 {
		return Value{}, fmt.Errorf("vmloop: map: %d values are not pairs of a key and a value", len(pairs))
	}
	v := Value{kind: KindMap, bits: uint64(key)<<8 | uint64(val), arr: append([]Value(nil), pairs...)}
	if err := v.checkMap(); err != nil {
		return Value{}, fmt.Errorf("vmloop: map: %w", err)
	}
	return v, nil
}

// mapTypes returns the key kind and value type of a map value.
func (v *Value) mapTypes() (Kind, Type) { return Kind(v.bits >> 8), Type(v.bits & 0xff) }

// checkMap checks the pairs of a map value (see Map).
func (v *Value) checkMap() error {
	key, val := v.mapTypes()
	seen := make(map[any]bool, len(v.arr)/2)
	for i := 0; i+1 < len(v.arr); i += 2 {
		k, x := &v.arr[i], &v.arr[i+1]
		var id any
		switch {
		case k.kind != key:
			return fmt.Errorf("key %d is %s, want %s", i/2, k.kind, key)
		case key == KindI64:
			id = k.bits
		case key == KindString:
			id = k.str
		default:
			id = string(k.b)
		}
		if seen[id] {
			return fmt.Errorf("key %d (%s) is there twice", i/2, k)
		}
		seen[id] = true
		if key != KindI64 && k.Len() > mapMaxKey {
			return fmt.Errorf("key %d of %d bytes (at most %d)", i/2, k.Len(), mapMaxKey)
		}
		if x.kind.Type() != val && !(val == TRef && x.kind == KindVoid) || x.kind == KindMap {
			return fmt.Errorf("value %d is %s, want %s", i/2, x.kind, val)
		}
	}
	return nil
}

// exportMap writes the copy of map m to dst (its key, value pairs in
// entry order, ref values void) and returns m's ref values in that order
// (nil for a map of scalars), for the export to copy into the pairs.
func exportMap(m *hmap, dst *Value) []uint64 {
	arr := make([]Value, 0, 2*m.live)
	var vals []uint64
	if m.val == TRef {
		vals = make([]uint64, 0, m.live)
	}
	for pos, _ := m.next(-1); pos >= 0; pos, _ = m.next(pos) {
		e, key := m.entry(pos), m.keyAt(pos)
		switch m.key {
		case KindI64:
			arr = append(arr, Value{kind: KindI64, bits: e.k})
		case KindString:
			arr = append(arr, Value{kind: KindString, str: key.s})
		default:
			arr = append(arr, Value{kind: KindBytes, b: []byte(key.s)})
		}
		switch m.val {
		case TI64:
			arr = append(arr, Value{kind: KindI64, bits: e.v})
		case TF64:
			arr = append(arr, Value{kind: KindF64, bits: e.v})
		default:
			arr = append(arr, Value{})
			vals = append(vals, e.v)
		}
	}
	*dst = Value{kind: KindMap, bits: uint64(m.key)<<8 | uint64(m.val), arr: arr}
	return vals
}

// mapExportHost is the host memory of a map's copy beside its Value.
func mapExportHost(m *hmap) int64 {
	return 2*valueBytes*int64(m.live) + m.acct - objHeader
}

// mapCopyUnits is the reductions copying map m's entries is worth.
func mapCopyUnits(m *hmap) int64 {
	return int64(m.live)*mapEntryCopyCost + charge(m.acct)
}

// mapPutAcct puts key and v into m and accounts what the map grew by;
// false (nothing changed) when the heap limit or the engine's budget
// refuses it. It returns the entry's position.
func (h *heap) mapPutAcct(m *hmap, key mapKey, v uint64) (int, bool) {
	if _, ok := h.mapRoom(m, key); !ok {
		return -1, false
	}
	before := m.acct
	pos := m.put(key, v)
	h.mapAcct(m, before)
	return pos, true
}

// mapRoom reports whether the heap has room for the growth a put of key
// into m may need (need: that growth).
func (h *heap) mapRoom(m *hmap, key mapKey) (need int64, ok bool) {
	need = m.growth(len(key.s))
	return need, need == 0 || h.fits(need) || m.find(key) >= 0
}

// mapAcct accounts the change of m's bytes since they were before.
func (h *heap) mapAcct(m *hmap, before int64) {
	if d := m.acct - before; d != 0 {
		h.bytes += d
		if d < 0 {
			h.uncover()
		}
	}
}

// importMap makes the map of v with its ref values null (importTree fills
// them: pair i is at entry position i of a new map).
func (h *heap) importMap(v *Value) (uint64, error) {
	if err := v.checkMap(); err != nil {
		return 0, TrapInfo{Code: TrapKind, Msg: "map: " + err.Error()}
	}
	key, val := v.mapTypes()
	x := h.newMap(key, val)
	if x == 0 {
		return 0, h.allocFail(objHeader + mapMinSlots*mapSlotBytes)
	}
	m := h.at(x).x.(*hmap)
	for i := 0; i+1 < len(v.arr); i += 2 {
		k, e := &v.arr[i], &v.arr[i+1]
		var mk mapKey
		switch key {
		case KindI64:
			mk.k = k.bits
		case KindString:
			mk.s = k.str
		default:
			mk.s = string(k.b)
		}
		bits := e.bits
		if val == TRef {
			bits = 0
		}
		if _, ok := h.mapPutAcct(m, mk, bits); !ok {
			n := m.growth(len(mk.s))
			h.release(x)
			return 0, h.allocFail(n)
		}
	}
	return x, nil
}

// copyMapStep copies entries of the map under copy it (a spawn's copy:
// spawn_copy.go) until the step's budget is used, and reports whether the
// map is done. As importMap and importTree do, it puts every key first
// (with its value, or null for a ref value), then copies the ref values
// in order, one at a time (a copy may push a ref array: it then returns,
// and it is stale), so that the child's heap grows in the same order and
// fails at the same object as an export and import would.
func (e *Exec) copyMapStep(src *Exec, c *spawnCopy, it *copyItem, owed *int64) (bool, error) {
	m, h := it.sm, &e.heap
	for *owed < copyStep {
		pos, skipped := m.next(it.i - 1)
		*owed += int64(skipped)
		if pos < 0 {
			if it.vals || m.val != TRef {
				return true, nil
			}
			it.vals, it.i = true, 0
			continue
		}
		it.i = pos + 1
		en := m.entry(pos)
		if !it.vals {
			key, v := m.keyAt(pos), en.v
			*owed += 2 * (mapEntryCopyCost + charge(int64(len(key.s))))
			if it.dm == nil || c.refused != nil {
				continue
			}
			if m.val == TRef {
				v = 0
			}
			if _, ok := h.mapPutAcct(it.dm, key, v); !ok {
				n := it.dm.growth(len(key.s))
				h.release(it.y)
				c.refused = h.allocFail(n)
				it.dm = nil
			}
			continue
		}
		dm, n := it.dm, it.n
		it.n++
		if en.v == 0 {
			continue
		}
		x, err := e.copyObj(src, en.v, c, owed) // may push: it is stale
		if err != nil {
			return false, err
		}
		if dm != nil && c.refused == nil {
			dm.entry(n).v = x
		}
		return false, nil
	}
	return false, nil
}

// copyMapObj makes in e's heap an empty map of the type of src's map o
// for a spawn's copy and pushes it on c.st (0 when the heap refuses it).
func (e *Exec) copyMapObj(o *object, c *spawnCopy, owed *int64) uint64 {
	m := o.x.(*hmap)
	*owed += 2 * copyObjCost
	if c.refused != nil {
		c.st = append(c.st, copyItem{sm: m})
		return 0
	}
	y := e.heap.newMap(m.key, m.val)
	if y == 0 {
		c.refused = e.heap.allocFail(objHeader + mapMinSlots*mapSlotBytes)
		c.st = append(c.st, copyItem{sm: m})
		return 0
	}
	c.st = append(c.st, copyItem{sm: m, dm: e.heap.at(y).x.(*hmap), y: y})
	return y
}

// mapString renders a map value as "map{k: v, ...}".
func (v Value) mapString() string {
	var sb strings.Builder
	sb.WriteString("map{")
	for i := 0; i+1 < len(v.arr); i += 2 {
		if i > 0 {
			sb.WriteString(", ")
		}
		if v.arr[i].kind == KindString {
			fmt.Fprintf(&sb, "%q", v.arr[i].str)
		} else {
			sb.WriteString(v.arr[i].String())
		}
		sb.WriteString(": ")
		sb.WriteString(v.arr[i+1].String())
	}
	sb.WriteByte('}')
	return sb.String()
}
