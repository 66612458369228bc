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
// The walks themselves are in heap_steps.go: they can also stop after a
// bounded step and go on later.

// export copies the object named by x out of the heap as a Value: bytes
// and arrays are deep-copied, strings shared, the null handle becomes Void.
// The copy may not exceed max accounted bytes (a DAG of shared arrays
// could otherwise expand without bound).
//
// While it is made, the copy's host memory is counted in the engine's
// budget (Limits.Memory), which it may not pass either: in host memory an
// array<ref> element is a Value, far more than the 8 bytes the heap
// accounts. The count ends with the copy; a caller that keeps it (the
// scheduler, for an outcome) counts it again (Value.HostBytes).
func (h *heap) export(x uint64, max int64) (Value, error) {
	v, _, err := h.exportN(x, max)
	return v, err
}

// copyObjCost is the reductions one object costs to copy across the heap
// boundary (made, checked and placed, each way), beside ⌈n/64⌉ for its n
// payload bytes: about 100–400 ns an object for a ref array of strings
// exported and imported, against 3–5 ns a reduction.
const copyObjCost = 32

// exportN is export that also returns the reductions the copy is worth
// (copyObjCost per object plus its payload's bytes), done or not.
func (h *heap) exportN(x uint64, max int64) (Value, int64, error) {
	var ex exporter
	h.exportStart(x, max, &ex)
	h.exportRun(&ex, -1)
	return h.exportEnd(&ex)
}

// exportFree is the part of a copy out of a heap that is not counted in
// the engine's budget: a copy's first bytes are made and consumed at once
// (a result, an argument, an error text), at most one per worker or host
// call at a time, so that a task can still end with a small result or
// error while its engine's budget is full.
const exportFree = 64 << 10

// exportCount is what an export has used: left is the accounted bytes it
// may still copy, host the host bytes of the copy so far and taken what it
// has reserved of the heap's budget for them.
type exportCount struct {
	h           *heap
	left        int64
	host, taken int64
	units       int64 // the reductions the copy is worth so far
}

// add counts an object of accounted size n whose copy takes host bytes.
func (c *exportCount) add(n, host int64) error {
	c.units += copyObjCost + charge(host)
	if c.left -= n; c.left < 0 {
		return TrapInfo{Code: TrapHeapLimit, Msg: "value to copy out of the task exceeds the heap limit"}
	}
	if c.host += host; c.host > c.taken+exportFree && c.h.budget() != nil {
		more := max(c.host-c.taken, 4*budgetChunk)
		if !c.h.budget().Take(more) {
			return TrapInfo{Code: TrapHeapLimit, Msg: c.h.memMsg("value to copy out of the task", c.host)}
		}
		c.taken += more
	}
	return nil
}

// importValue copies v into the heap and returns its handle (0 for Void).
// A failure (heap limit, a non-reference value) is a TrapInfo, and the
// heap is left as it was: the objects made so far are released, so a
// caller may throw the failure to the task instead of trapping it.
func (h *heap) importValue(v Value) (uint64, error) {
	x, _, err := h.importValueN(v)
	return x, err
}

// importValueN is importValue that also returns the reductions the copy is
// worth (as exportN), done or not.
func (h *heap) importValueN(v Value) (uint64, int64, error) {
	if v.kind != KindArrayRef && (v.kind != KindMap || v.bits&0xff != uint64(TRef)) {
		x, err := h.importOne(&v) // one object: nothing to roll back
		return x, importUnits(&v), err
	}
	return h.importTree(v)
}

// importUnits is what importing the object of v (not its elements) is
// worth: copyObjCost and its payload's bytes.
func importUnits(v *Value) int64 {
	switch v.kind {
	case KindVoid, KindI64, KindF64:
		return 0
	case KindBytes:
		return copyObjCost + charge(int64(len(v.b)))
	case KindArrayI64, KindArrayF64:
		return copyObjCost + charge(int64(len(v.b)))
	case KindArrayRef:
		return copyObjCost + charge(8*int64(len(v.arr)))
	case KindMap:
		units := copyObjCost + mapEntryCopyCost*int64(len(v.arr)/2)
		for i := 0; i < len(v.arr); i += 2 {
			units += charge(int64(v.arr[i].Len()))
		}
		return units
	}
	return copyObjCost
}

// importTree is importValue of a ref array or a map of ref values. (A function of its own: the
// importer holds v, which moves it to the Go heap, and importValue must
// not pay that allocation for the one-object case, every task handle a
// spawn returns among them: BenchmarkChainedSpawn.)
func (h *heap) importTree(v Value) (uint64, int64, error) {
	var im importer
	h.importStart(v, &im)
	h.importRun(&im, -1)
	if im.err != nil {
		return 0, im.units, im.err
	}
	return im.root, im.units, nil
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
	case KindArrayI64, KindArrayF64:
		nums := v.nums()
		n = objSize("", "", 0, len(nums))
		if !h.fits(n) {
			break
		}
		if x = h.newArray(v.kind, len(nums)); x != 0 {
			copy(h.at(x).arr(), nums)
		}
	case KindArrayRef:
		n = objSize("", "", 0, len(v.arr))
		if !h.fits(n) {
			break
		}
		x = h.newArray(v.kind, len(v.arr))
	case KindTask, KindEvent, KindExt:
		return h.importShared(v.kind, v.ext)
	case KindMap:
		return h.importMap(v)
	default:
		return 0, TrapInfo{Code: TrapKind, Msg: fmt.Sprintf("%s is not a reference value", v.kind)}
	}
	if x == 0 {
		return 0, h.allocFail(n)
	}
	return x, nil
}

// copyFree is the largest copy across the heap boundary that a request's
// flat cost covers: owe records only larger ones (and so allocates the rare
// part only for them).
const copyFree = 256

// owe records units reductions of a copy made for a request (ArgValue,
// Complete, the arguments of a spawn), when they exceed copyFree.
func (e *Exec) owe(units int64) {
	if units > copyFree {
		e.x().copied += units
	}
}

// TakeCopyCharge returns the reductions owed for the copies across the
// heap boundary made for the requests handled since the last call (the
// arguments of a spawn exported from this heap and imported into the
// child's, a joined result or host value imported, an argument exported
// for a host call) and counts them in Reductions. The scheduler charges
// them to the slice in which they were made, so a task that copies a
// large value across the boundary is preempted at its next safe point.
func (e *Exec) TakeCopyCharge() int64 {
	c := e.takeCopied()
	e.reductions += uint64(c)
	return c
}

// takeCopied is TakeCopyCharge for a request answered in the VM loop,
// whose budget the charge comes out of: Run counts it in Reductions with
// the rest of what the budget lost.
func (e *Exec) takeCopied() int64 {
	if e.rare == nil || e.rare.copied == 0 {
		return 0
	}
	c := e.rare.copied
	e.rare.copied = 0
	return c
}
