package vmloop

import (
	"errors"
	"fmt"
)

// The reference arguments of a spawn, copied from the spawner's heap
// straight into the child's in bounded steps.
//
// A spawner stopped at its SPAWN request does not run until the request
// completes, and nothing else writes its heap (a heap belongs to its
// task), so the copy can be cut into steps that the scheduler runs in the
// spawner's slices: every step copies about copyStep reductions' worth
// and returns, and the request stays pending (the spawner's registers and
// objects as they were) until the last step. The child's Exec is not a
// task until then: a failed or abandoned copy is dropped with it
// (Recycle), and what its heap took of the engine's budget with it. No
// Value is built on the way (a Value is 112 bytes an array<ref> element).
//
// The copy is the one export and importValue make through a Value: the
// same objects, made in the same order (depth first, elements in order),
// a DAG copied once per reference, strings and errors sharing their bytes,
// task, event and ext objects naming the same shared object, the same
// bound on the accounted bytes of each argument's copy (the spawner's heap
// limit) and the same errors (TestSpawnCopyEqualsExportImport).

// copyStep is the work one step of a spawn's copy does before it returns
// (SpawnMore): the reductions it owes (2 × copyObjCost an object, its
// payload's bytes both ways) plus one per 8 array<ref> elements looked at
// (their charge is owed when the array is made). About
// 250 objects, or 0.5 MiB of payload bytes: 30–100 µs. An object whose
// payload is larger is copied in one step of its own (a memmove of its
// bytes: about 0.1 ms a MiB).
const copyStep = 16384

// spawnCopy is the progress of a spawn's copy (Exec.rare.spawn of the
// child's Exec). Invariant: every array in st is already made in the
// child's heap with its elements before i copied; arg is the first
// argument not yet started; left never goes below zero on success.
type spawnCopy struct {
	f *Function
	argWindow
	arg  int   // the next argument to start
	cur  int   // the argument the stack belongs to
	left int64 // accounted bytes the argument's copy may still make
	st   []copyItem
	// refused is the child heap's refusal of an object of argument cur
	// (the heap limit, the engine's budget). The rest of the argument is
	// still walked, without copying, for a fault of the spawner's (a stale
	// handle, the argument past the limit), which comes first, as when an
	// argument was exported whole before it was imported.
	refused error
}

// copyItem is a ref array under copy: the spawner's elements, the copy's,
// and the next element to copy.
type copyItem struct {
	src, dst []uint64
	i        int
	// sm is a map under copy instead (src and dst unused): dm its copy
	// (nil: walked, not copied), y dm's handle, i the next entry position
	// of sm, and, once vals is set (its keys are all in dm), n the
	// entries whose values are done (the nth live entry of sm is at
	// position n of dm).
	sm, dm *hmap
	y      uint64
	n      int
	vals   bool
}

// BeginSpawn starts e as the child of src's pending spawn request, as
// ResetSpawn, but copies the reference arguments in steps: it does the
// first step and reports whether more remain (SpawnMore does them). Until
// the last step, src must stay stopped at its request and e must not run;
// a copy that is given up is dropped with e.Recycle.
func (e *Exec) BeginSpawn(src *Exec, lim Limits, owner uint32) (more bool, err error) {
	if src.state != stRequest || src.req.Op != SPAWN {
		return false, errors.New("vmloop: ResetSpawn: no pending spawn request")
	}
	f, err := e.start(src.prog, int(src.req.Func), int(src.req.NArgs), lim, owner)
	if err != nil {
		return false, err
	}
	aw := argWindow{r0: src.frames[src.fp].base, win: src.reqWin}
	if aw.win {
		aw.r0 += int(src.req.Base)
	} else {
		aw.r0 += int(src.reqArg0)
	}
	// Scalars first (the verifier typed the registers by f.Params); the
	// references follow in order.
	refs, shared := false, true
	for i, t := range f.Params {
		if t != TRef {
			e.setAbs(i, src.getAbs(aw.reg(i), t), t)
			continue
		}
		refs = true
		if x := src.getAbs(aw.reg(i), TRef); x&handleIdxMask != 0 {
			shared = false // a heap object: copied
		}
	}
	if !refs {
		return false, nil
	}
	if shared {
		if ok, err := e.spawnShared(src, f, aw); ok {
			return false, err
		}
	}
	c := spawnCopy{f: f, argWindow: aw}
	work, err := e.spawnStep(src, &c)
	src.owe(work.owed)
	if err != nil || work.done {
		return false, err
	}
	e.x().spawn = new(spawnCopy) // the rare case: a copy of more than a step
	*e.rare.spawn = c            // (c itself stays on the stack)
	return true, nil
}

// spawnShared takes the reference arguments of a spawn whose every
// reference argument is null or a shared reference (a task, an event:
// copyObj's holds of the same objects, owed the same reductions) without
// the copy machinery (a chained spawn's event, BenchmarkChainedSpawn).
// ok is false when an argument is one that copyObj refuses (a stale
// reference, a heap limit below its size): the copy in steps then
// reports it, and the spawn fails (the holds made so far go with the
// child's heap). aw is where src's arguments are.
func (e *Exec) spawnShared(src *Exec, f *Function, aw argWindow) (ok bool, err error) {
	owed := int64(0)
	for i, t := range f.Params {
		if t != TRef {
			continue
		}
		x := src.getAbs(aw.reg(i), TRef)
		if x == 0 {
			continue
		}
		sl := src.heap.ref(x)
		if sl == nil {
			return false, nil
		}
		// copyObj's bound on each argument: object.size of a task
		// reference is 0, of an event objHeader.
		k := refKind(x)
		if k == KindEvent && objHeader > src.heap.bnd.limit {
			return false, nil
		}
		y, err := e.heap.importShared(k, sl.obj)
		if err != nil {
			src.owe(owed)
			return true, argImportErr(f, i, err)
		}
		owed += 2 * copyObjCost
		e.setAbs(i, y, TRef)
	}
	src.owe(owed)
	return true, nil
}

// argWindow is where a spawn's arguments are in the spawner's registers.
type argWindow struct {
	r0  int  // the spawner's register of argument 0 (reqWin: base)
	win bool // the spawner's argument registers are a window
}

// reg is the spawner's register of argument i.
func (a argWindow) reg(i int) int {
	if a.win {
		return a.r0 + i
	}
	return a.r0
}

// SpawnMore does the next step of the copy BeginSpawn started and reports
// whether more remain. The reductions of the step are owed by src (its
// worker does the copy: TakeCopyCharge). An error ends the copy: a
// TrapInfo wrapped (src's fault: a stale handle, a copy past the heap
// limit) or an error of the child's heap (the engine's budget); e must
// then be recycled.
func (e *Exec) SpawnMore(src *Exec) (more bool, err error) {
	var c *spawnCopy
	if e.rare != nil {
		c = e.rare.spawn
	}
	if c == nil {
		return false, errors.New("vmloop: SpawnMore: no spawn copy under way")
	}
	work, err := e.spawnStep(src, c)
	src.owe(work.owed)
	if err != nil || work.done {
		e.rare.spawn = nil
	}
	return !work.done && err == nil, err
}

// copyWork is what one step did: owed the reductions to charge, done
// whether the copy is finished.
type copyWork struct {
	owed int64
	done bool
}

// spawnStep copies until copyStep is used or the copy is finished.
func (e *Exec) spawnStep(src *Exec, c *spawnCopy) (w copyWork, err error) {
	var scan int64 // array<ref> elements looked at
	for w.owed+scan/8 < copyStep {
		if len(c.st) == 0 {
			if c.refused != nil {
				return w, c.fail(src, c.refused)
			}
			for c.arg < len(c.f.Params) && c.f.Params[c.arg] != TRef {
				c.arg++
			}
			if c.arg == len(c.f.Params) {
				w.done = true
				break
			}
			c.cur, c.left = c.arg, src.heap.bnd.limit // each argument's own bound
			c.arg++
			bits := src.getAbs(c.reg(c.cur), TRef)
			x, err := e.copyObj(src, bits, c, &w.owed)
			if err != nil {
				return w, c.fail(src, err)
			}
			e.setAbs(c.cur, x, TRef)
			continue
		}
		it := &c.st[len(c.st)-1]
		if it.sm != nil {
			done, err := e.copyMapStep(src, c, it, &w.owed)
			if err != nil {
				return w, c.fail(src, err)
			}
			if done {
				c.st = c.st[:len(c.st)-1]
			}
			continue
		}
		n := min(len(it.src), it.i+int(copyStep-w.owed-scan/8)*8)
		for ; it.i < n && it.src[it.i] == 0; it.i++ {
			scan++
		}
		if it.i == len(it.src) {
			c.st = c.st[:len(c.st)-1]
			continue
		}
		if it.i == n {
			continue // the step may be over
		}
		scan++
		dst, i := it.dst, it.i
		it.i++
		x, err := e.copyObj(src, it.src[i], c, &w.owed) // may push: it is stale
		if err != nil {
			return w, c.fail(src, err)
		}
		if dst != nil {
			dst[i] = x
		}
	}
	return w, nil
}

// fail is the error of a failed copy of argument c.cur: src's own fault
// (a TrapInfo it traps with) as ArgValue reported it, the child heap's as
// import reported it.
func (c *spawnCopy) fail(src *Exec, err error) error {
	var ce copyErr
	if errors.As(err, &ce) {
		return fmt.Errorf("vmloop: ResetSpawn: argument %d of %s: %w", c.cur, c.f.Name, src.reqTrapInfo(ce.TrapInfo))
	}
	return argImportErr(c.f, c.cur, err)
}

// copyErr marks a failure that is the spawner's (a stale handle, a copy
// past its heap limit), not the child heap's.
type copyErr struct{ TrapInfo }

// copyObj makes in e's heap the copy of object x of src's heap (0 for the
// null handle), owes its reductions, and pushes a non-empty ref array on
// c.st for its elements.
func (e *Exec) copyObj(src *Exec, x uint64, c *spawnCopy, owed *int64) (uint64, error) {
	if x == 0 {
		return 0, nil
	}
	o := src.heap.getLive(x)
	if o == nil {
		sl := src.heap.ref(x)
		if sl == nil {
			return 0, copyErr{TrapInfo{Code: TrapHandle, Msg: src.heap.explain(x, KindVoid)}}
		}
		o = &object{kind: refKind(x), x: sl.obj} // read below, never stored
	}
	n := o.size()
	if c.left -= n; c.left < 0 {
		return 0, copyErr{TrapInfo{Code: TrapHeapLimit, Msg: "value to copy out of the task exceeds the heap limit"}}
	}
	if o.kind == KindMap {
		return e.copyMapObj(o, c, owed), nil
	}
	if c.refused != nil {
		*owed += copyObjCost // looked at, not copied
		if o.kind == KindArrayRef && o.n > 0 {
			c.st = append(c.st, copyItem{src: o.arr()})
		}
		return 0, nil
	}
	h := &e.heap
	var y uint64
	payload := int64(0)
	switch o.kind {
	case KindString:
		y = h.newString(o.str())
	case KindError:
		aux, _ := o.x.(string)
		y = h.newError(aux, o.str())
	case KindBytes:
		payload = int64(o.n)
		if h.fits(n) {
			y = h.newBytes(append([]byte(nil), o.bytes()...))
		}
	case KindArrayI64, KindArrayF64, KindArrayRef:
		payload = 8 * int64(o.n)
		if h.fits(n) {
			y = h.newArray(o.kind, int(o.n))
		}
		if y != 0 && o.kind != KindArrayRef {
			copy(h.at(y).arr(), o.arr())
		}
	default: // task, event, ext: the same shared object
		*owed += 2 * copyObjCost
		y, err := h.importShared(o.kind, o.x)
		if err != nil {
			c.refused = err
		}
		return y, nil
	}
	if y == 0 {
		c.refused = h.allocFail(n)
		if o.kind == KindArrayRef && o.n > 0 {
			c.st = append(c.st, copyItem{src: o.arr()}) // walked, not copied
		}
		return 0, nil
	}
	*owed += 2 * (copyObjCost + charge(payload))
	if o.kind == KindArrayRef && o.n > 0 {
		c.st = append(c.st, copyItem{src: o.arr(), dst: h.at(y).arr()})
	}
	return y, nil
}
