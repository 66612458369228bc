package vmloop

import "fmt"

// Copies across the heap boundary in bounded steps: an export (a task's
// reference result or a request's argument, a channel's message, copied
// out of its heap as a Value) and an import (a joined task's result or a
// received message, copied into the task's heap) that a caller can
// stop after any step and resume, the heap unchanged in between (the task
// is stopped at its RET or its request). export and importValue run the
// same walks to the end (heap_copy.go), so a copy in steps makes the same
// objects in the same order and fails the same way.
//
// Both walk depth first with an explicit stack of the ref arrays under
// copy and the next element of each, so that a step also stops inside a
// large array: it does about copyStep reductions' worth (copyObjCost an
// object and its payload's bytes, plus one per 8 elements looked at).

// exportFrame is a ref array under export: its elements in the heap, the
// Values of its copy and the next element. For a map's ref values, src is
// the values in entry order and value i goes to dst[2i+1] (dst holds the
// copy's key, value pairs): pairs is set.
type exportFrame struct {
	src   []uint64
	dst   []Value
	i     int
	pairs bool
}

// exporter is the progress of an export.
type exporter struct {
	c    exportCount
	root Value
	st   []exportFrame
	err  error // the copy failed (exportEnd reports it)
	// started: exportStart has run (finish may make the exporter first)
	started bool
	// charged is what of c.units the task has been charged (finish).
	charged int64
	// hostBytes is root.HostBytes() of the copy so far.
	hostBytes int64
	// exts: the host objects of the KindExt objects met are kept in ext
	// (once a reference), for a request's argument (ArgValueMore).
	exts bool
	ext  []any
}

// exportStart begins the export of the object named by x (max: as export).
func (h *heap) exportStart(x uint64, max int64, ex *exporter) {
	*ex = exporter{c: exportCount{h: h, left: max, host: valueBytes}, hostBytes: valueBytes, started: true}
	ex.err = h.exportObj(x, &ex.root, ex)
}

// exportRun goes on with ex for about budget reductions (budget < 0: to
// the end) and reports whether the walk is over (done or failed).
func (h *heap) exportRun(ex *exporter, budget int64) bool {
	u0 := ex.c.units
	var scan int64
	for ex.err == nil && len(ex.st) > 0 {
		if budget >= 0 && ex.c.units-u0+scan/8 >= budget {
			return false
		}
		f := &ex.st[len(ex.st)-1]
		if f.i >= len(f.src) {
			ex.st = ex.st[:len(ex.st)-1]
			continue
		}
		i := f.i
		f.i++
		scan++
		if x := f.src[i]; x != 0 {
			d := &f.dst[i]
			if f.pairs {
				d = &f.dst[2*i+1]
			}
			ex.err = h.exportObj(x, d, ex) // may push: f is stale
		}
	}
	return true
}

// exportEnd gives back what ex reserved of the engine's budget and
// returns its copy (or its failure) and the reductions it is worth.
func (h *heap) exportEnd(ex *exporter) (Value, int64, error) {
	h.budget().Give(ex.c.taken)
	ex.c.taken = 0
	ex.st = nil
	if ex.err != nil {
		return Value{}, ex.c.units, ex.err
	}
	return ex.root, ex.c.units, nil
}

// exportObj writes the copy of object x to dst, charging it to ex; a ref
// array is made with void elements and pushed for them. It never
// allocates heap slots, so an object's payload stays where it is.
func (h *heap) exportObj(x uint64, dst *Value, ex *exporter) error {
	if x == 0 {
		*dst = Value{}
		return nil
	}
	o := h.getLive(x)
	if o == nil {
		if sl := h.ref(x); sl != nil {
			o = &object{kind: refKind(x), x: sl.obj} // read below, never stored
		} else {
			return TrapInfo{Code: TrapHandle, Msg: h.explain(x, KindVoid)}
		}
	}
	host := int64(0) // the payload's (the Value itself is its parent's)
	switch o.kind {
	case KindBytes, KindArrayI64, KindArrayF64:
		host = o.size() - objHeader
	case KindArrayRef:
		host = valueBytes * int64(o.n)
	case KindMap:
		host = mapExportHost(o.x.(*hmap))
		ex.c.units += mapCopyUnits(o.x.(*hmap))
	}
	if err := ex.c.add(o.size(), host); err != nil {
		return err
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
		nums, b := packed(int(o.n))
		copy(nums, o.arr())
		*dst = Value{kind: o.kind, b: b}
	case KindArrayRef:
		elems := o.arr()
		arr := make([]Value, len(elems))
		*dst = Value{kind: KindArrayRef, arr: arr}
		ex.hostBytes += valueBytes * int64(cap(arr))
		if len(elems) > 0 {
			ex.st = append(ex.st, exportFrame{src: elems, dst: arr})
		}
	case KindMap:
		vals := exportMap(o.x.(*hmap), dst)
		for i := range dst.arr {
			if k := &dst.arr[i]; k.kind.Type() == TRef {
				ex.hostBytes += int64(len(k.str) + cap(k.b))
			}
		}
		ex.hostBytes += valueBytes * int64(cap(dst.arr))
		if len(vals) > 0 {
			ex.st = append(ex.st, exportFrame{src: vals, dst: dst.arr, pairs: true})
		}
	default: // task, event, ext
		noteTask(o.kind, o.x, 0) // it may now be held anywhere
		if ex.exts && o.kind == KindExt {
			ex.ext = append(ex.ext, o.x)
		}
		*dst = Value{kind: o.kind, ext: o.x}
	}
	ex.hostBytes += int64(len(dst.str) + len(dst.aux) + cap(dst.b)) // as Value.HostBytes
	return nil
}

// importFrame is a ref array under import: the Values of its elements,
// its elements in the heap and the next one. For a map of ref values, src
// is the map value's key, value pairs, i steps over the values and value
// i goes to entry i/2 of m (entries never move).
type importFrame struct {
	src []Value
	dst []uint64
	i   int
	m   *hmap
}

// importer is the progress of an import of a ref array.
type importer struct {
	v     Value // the value imported (held until the import ends)
	root  uint64
	st    []importFrame
	made  []uint64 // the objects made, released again if it fails
	units int64    // the reductions the copy is worth so far
	err   error    // the import failed: made is being released
	// owed is what of units has been owed (Exec.owe) so far.
	owed int64
	// held is the caller's record of what the import delivers
	// (CompleteIfRoomMoreHeld), told if the task is dropped before the
	// import ends; nil for none.
	held ImportHolder
}

// importStart begins the import of v, a ref array.
func (h *heap) importStart(v Value, im *importer) {
	*im = importer{v: v}
	im.root, im.err = h.importObj(&im.v, im)
}

// importObj makes the object of v (a ref array with null elements,
// pushed for them) and records it.
func (h *heap) importObj(v *Value, im *importer) (uint64, error) {
	x, err := h.importOne(v)
	im.units += importUnits(v)
	if err != nil {
		return 0, err
	}
	im.made = append(im.made, x)
	if v.kind == KindArrayRef && len(v.arr) > 0 {
		im.st = append(im.st, importFrame{src: v.arr, dst: h.at(x).arr()})
	}
	if v.kind == KindMap && len(v.arr) > 0 {
		if m := h.at(x).x.(*hmap); m.val == TRef {
			im.st = append(im.st, importFrame{src: v.arr, i: 1, m: m})
		}
	}
	return x, nil
}

// rollbackStep is how many objects one step of a failed import releases.
const rollbackStep = copyStep / copyObjCost

// importRun goes on with im for about budget reductions (budget < 0: to
// the end): the walk, then, if it failed, the release of what it made. It
// reports whether the import is over; im.err is then its failure, and the
// heap is as it was before importStart.
func (h *heap) importRun(im *importer, budget int64) bool {
	u0 := im.units
	var scan int64
	for im.err == nil && len(im.st) > 0 {
		if budget >= 0 && im.units-u0+scan/8 >= budget {
			return false
		}
		f := &im.st[len(im.st)-1]
		if f.i >= len(f.src) {
			im.st = im.st[:len(im.st)-1]
			continue
		}
		i := f.i
		f.i++
		if f.m != nil {
			f.i++ // a map's values: every other element
		}
		scan++
		e := &f.src[i]
		if e.kind == KindVoid {
			continue
		}
		if e.kind.Type() != TRef || e.kind == KindMap {
			im.err = TrapInfo{Code: TrapKind, Msg: fmt.Sprintf("array<ref> element %d is %s", i, e.kind)}
			break
		}
		dst, m := f.dst, f.m
		x, err := h.importObj(e, im) // may push: f is stale
		if err != nil {
			im.err = err
			break
		}
		if m != nil {
			m.entry(i / 2).v = x
		} else {
			dst[i] = x
		}
	}
	if im.err == nil {
		im.st = nil
		return true
	}
	im.st = nil
	n := len(im.made)
	if budget >= 0 {
		n = min(n, rollbackStep)
	}
	for ; n > 0; n-- { // newest first
		h.release(im.made[len(im.made)-1])
		im.made = im.made[:len(im.made)-1]
	}
	return len(im.made) == 0
}
