package vmloop

import "fmt"

// Copying values across the heap boundary.
//
// export and importValue walk an object graph of any depth: a task can
// nest ref arrays as deep as its heap limit allows (a chain of a million
// one-element arrays fits the default limit), so they keep their work on
// an explicit stack instead of recursing once per level, which would
// overflow the goroutine stack — a fatal error of the whole process that
// no recover sees. Heaps are acyclic (ASETR's cycle check), so the walks
// end; a DAG is copied once per reference, bounded by the byte budget.

// exportItem is a pending object of export: the handle and the Value its
// copy goes to (the root, or an element of a parent's new array).
type exportItem struct {
	x   uint64
	dst *Value
}

// export copies the object named by x out of the heap as a Value: bytes
// and arrays are deep-copied, strings shared, the null handle becomes Void.
// The copy may not exceed max accounted bytes (a DAG of shared arrays
// could otherwise expand without bound).
func (h *heap) export(x uint64, max int64) (Value, error) {
	budget := max
	var root Value
	st, err := h.exportOne(x, &root, &budget, nil)
	for err == nil && len(st) > 0 {
		it := st[len(st)-1]
		st, err = h.exportOne(it.x, it.dst, &budget, st[:len(st)-1])
	}
	if err != nil {
		return Value{}, err
	}
	return root, nil
}

// exportOne writes the copy of object x to dst, charging it to budget, and
// returns st with the non-null elements of a ref array pushed (in reverse,
// so that they are copied in order). It never allocates heap slots, so an
// object's payload stays where it is during the walk.
func (h *heap) exportOne(x uint64, dst *Value, budget *int64, st []exportItem) ([]exportItem, error) {
	if x == 0 {
		*dst = Value{}
		return st, nil
	}
	o := h.getLive(x)
	if o == nil {
		return st, TrapInfo{Code: TrapHandle, Msg: h.explain(x, KindVoid)}
	}
	*budget -= o.size()
	if *budget < 0 {
		return st, TrapInfo{Code: TrapHeapLimit, Msg: "value to copy out of the task exceeds the heap limit"}
	}
	switch o.kind {
	case KindString:
		*dst = Value{kind: KindString, str: o.str()}
	case KindBytes:
		*dst = Value{kind: KindBytes, b: append([]byte(nil), o.bytes()...)}
	case KindError:
		aux, _ := o.x.(string)
		*dst = Value{kind: KindError, str: o.str(), aux: aux}
	case KindArrayI64, KindArrayF64:
		ek := KindI64
		if o.kind == KindArrayF64 {
			ek = KindF64
		}
		elems := o.arr()
		arr := make([]Value, len(elems))
		for i, bits := range elems {
			arr[i] = Value{kind: ek, bits: bits}
		}
		*dst = Value{kind: o.kind, arr: arr}
	case KindArrayRef:
		elems := o.arr()
		arr := make([]Value, len(elems))
		*dst = Value{kind: KindArrayRef, arr: arr}
		for i := len(elems) - 1; i >= 0; i-- {
			if elems[i] != 0 {
				st = append(st, exportItem{elems[i], &arr[i]})
			}
		}
	default: // task, event, ext
		noteTask(o.kind, o.x, 0) // it may now be held anywhere
		*dst = Value{kind: o.kind, ext: o.x}
	}
	return st, nil
}

// importItem is a pending value of importValue: the Value and where its
// handle goes (the root, or an element of a parent's new ref array, whose
// payload does not move when the object table grows).
type importItem struct {
	v   *Value
	dst *uint64
}

// importValue copies v into the heap and returns its handle (0 for Void).
// A failure (heap limit, a non-reference value) is a TrapInfo, and the
// heap is left as it was: the objects made so far are released, so a
// caller may throw the failure to the task instead of trapping it.
func (h *heap) importValue(v Value) (uint64, error) {
	if v.kind != KindArrayRef {
		return h.importOne(&v) // one object: nothing to roll back
	}
	return h.importTree(v)
}

// importTree is importValue of a ref array. (A function of its own: its
// work list holds &v, which moves v to the Go heap, and importValue must
// not pay that allocation for the one-object case, every task handle a
// spawn returns among them: BenchmarkChainedSpawn.)
func (h *heap) importTree(v Value) (uint64, error) {
	var root uint64
	var made []uint64
	st := []importItem{{&v, &root}}
	for len(st) > 0 {
		it := st[len(st)-1]
		st = st[:len(st)-1]
		x, err := h.importOne(it.v)
		if err != nil {
			h.rollback(made)
			return 0, err
		}
		*it.dst = x
		made = append(made, x)
		if it.v.kind != KindArrayRef {
			continue
		}
		arr := h.at(x).arr()
		for i := len(it.v.arr) - 1; i >= 0; i-- {
			e := &it.v.arr[i]
			if e.kind == KindVoid {
				continue
			}
			if e.kind.Type() != TRef {
				h.rollback(made)
				return 0, TrapInfo{Code: TrapKind, Msg: fmt.Sprintf("array<ref> element %d is %s", i, e.kind)}
			}
			st = append(st, importItem{e, &arr[i]})
		}
	}
	return root, nil
}

// rollback releases the objects of a failed import, newest first.
func (h *heap) rollback(made []uint64) {
	for i := len(made) - 1; i >= 0; i-- {
		h.release(made[i])
	}
}

// importOne makes the object of one value: a ref array is made with null
// elements (importValue fills them), every other kind complete.
func (h *heap) importOne(v *Value) (uint64, error) {
	var x uint64
	var n int64
	switch v.kind {
	case KindVoid:
		return 0, nil
	case KindString:
		n = objSize(v.str, "", 0, 0)
		x = h.newString(v.str)
	case KindBytes:
		n = objSize("", "", len(v.b), 0)
		if !h.fits(n) {
			break
		}
		x = h.newBytes(append([]byte(nil), v.b...))
	case KindError:
		n = objSize(v.str, v.aux, 0, 0)
		x = h.newError(v.aux, v.str)
	case KindArrayI64, KindArrayF64, KindArrayRef:
		n = objSize("", "", 0, len(v.arr))
		if !h.fits(n) {
			break
		}
		if v.kind != KindArrayRef {
			for i, e := range v.arr {
				if !arrayAccepts(v.kind, e.kind) {
					return 0, TrapInfo{Code: TrapKind, Msg: fmt.Sprintf("%s element %d is %s", v.kind, i, e.kind)}
				}
			}
		}
		x = h.newArray(v.kind, len(v.arr))
		if x == 0 || v.kind == KindArrayRef {
			break
		}
		arr := h.at(x).arr()
		for i, e := range v.arr {
			arr[i] = e.bits
		}
	case KindTask, KindEvent, KindExt:
		return h.importShared(v.kind, v.ext)
	default:
		return 0, TrapInfo{Code: TrapKind, Msg: fmt.Sprintf("%s is not a reference value", v.kind)}
	}
	if x == 0 {
		return 0, h.allocFail(n)
	}
	return x, nil
}
