package vmloop

import "errors"

// A request's reference argument copied out of the heap in bounded steps
// (heap_steps.go): a channel's message. The task stays stopped at its
// request, its registers and objects as they were, while its dispatcher
// calls ArgValueMore again for the next step; nothing else writes its
// heap in between (a heap belongs to its task).

// argExport is the export of argument i of the pending request under way.
type argExport struct {
	i  int
	ex exporter
}

// ArgCopy is a reference argument copied out of the heap (ArgValueMore).
type ArgCopy struct {
	// V is the copy, as ArgValue returns it.
	V Value
	// HostBytes is V.HostBytes(), counted on the way (no walk of V).
	HostBytes int64
	// Exts is the host object of every KindExt object V holds, at any
	// depth, once a reference (a socket or file handle).
	Exts []any
}

// ArgValueMore is ArgValue of reference argument i in bounded steps: each
// call copies about copyStep reductions' worth, owed by the task (owe,
// TakeCopyCharge), and more is true while steps remain: the request stays
// pending and the caller calls again with the same i until more is
// false; the copy and err are then ArgValue's. A task dropped between two
// calls (Recycle) gives back what the copy reserved of the engine's
// budget. The scalar and null arguments complete in one call.
func (e *Exec) ArgValueMore(i int) (c ArgCopy, more bool, err error) {
	var a *argExport
	if e.rare != nil {
		a = e.rare.arg
	}
	var local argExport // the common case: a copy of one step
	if a == nil {
		ri := e.argReg(i, TVoid, "ArgValueMore")
		t := e.reqParams()[i]
		if t != TRef {
			v, err := e.ArgValue(i)
			return ArgCopy{V: v, HostBytes: v.HostBytes()}, false, err
		}
		a = &local
		a.i = i
		e.heap.exportStart(e.getAbs(ri, t), e.heap.bnd.limit, &a.ex)
		a.ex.exts = true
		if a.ex.err == nil && a.ex.root.kind == KindExt {
			a.ex.ext = append(a.ex.ext, a.ex.root.ext) // set before exts
		}
	} else if a.i != i {
		return ArgCopy{}, false, errors.New("vmloop: ArgValueMore: another argument's copy is under way")
	}
	done := e.heap.exportRun(&a.ex, copyStep)
	if a.ex.c.units > copyFree { // as owe, for the copy as a whole
		e.x().copied += a.ex.c.units - a.ex.charged
		a.ex.charged = a.ex.c.units
	}
	if !done {
		if a == &local {
			e.x().arg = new(argExport)
			*e.rare.arg = local // its frames name the copy's arrays, not local
		}
		return ArgCopy{}, true, nil
	}
	if e.rare != nil {
		e.rare.arg = nil
	}
	v, _, err := e.heap.exportEnd(&a.ex)
	if err != nil {
		return ArgCopy{}, false, e.reqTrapInfo(err)
	}
	return ArgCopy{V: v, HostBytes: a.ex.hostBytes, Exts: a.ex.ext}, false, nil
}

// ExtObjects returns the host object of every KindExt value v holds, at
// any depth (ArgCopy.Exts of a value that was not copied out of a heap).
func ExtObjects(v Value) []any {
	var out []any
	st := []*Value{&v}
	for len(st) > 0 {
		x := st[len(st)-1]
		st = st[:len(st)-1]
		if x.kind == KindExt {
			out = append(out, x.ext)
		}
		for i := range x.arr {
			if x.arr[i].kind.Type() == TRef {
				st = append(st, &x.arr[i])
			}
		}
	}
	return out
}
