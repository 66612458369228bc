package vmloop

// The results that cross the heap boundary in bounded steps (heap_steps.go):
// a task's reference result, exported at its RET over as many Runs as it
// takes, and a request's reference result (a joined task's value),
// imported over as many calls as it takes (a channel's message too). A
// request's argument goes out in arg_copy.go, a spawn's arguments heap to
// heap in steps of their own (spawn_copy.go).

// finState is how finish ended.
type finState uint8

const (
	finDone    finState = iota // the task completed
	finTrapped                 // e.x().trap holds the trap
	finMore                    // the export has more steps (the task stays at its RET)
)

// finish ends the task with the entry function's return value (bits of
// type t). A reference result is copied out of the heap in steps of about
// copyStep reductions, charged to the task (when the whole copy is worth
// more than copyFree): while the budget lasts and no Stop came, the next
// step follows at once; otherwise finish reports finMore, and the RET
// runs again at the next Run and goes on with the copy. The RET of a
// reference result is a safe point: the copy starts with budget left.
func (e *Exec) finish(bits uint64, t Type) finState {
	// A scalar result stays inline (no rare part for the common case).
	e.res, e.resT = bits, t
	if t == TRef {
		x := e.x()
		var local exporter // the common case: a copy of one step
		ex := x.exp
		switch {
		case ex != nil:
			e.left++ // the RET was charged when it started
		case e.left <= 0 || e.stop.Load():
			// a safe point: a bulk instruction may have spent the budget
			// just before; the copy starts at the next Run
			x.exp = new(exporter)
			return finMore
		default:
			ex = &local
		}
		if !ex.started {
			e.heap.exportStart(bits, e.heap.bnd.limit, ex)
		}
		for !e.heap.exportRun(ex, copyStep) {
			e.chargeExport(ex)
			if e.left <= 0 || e.stop.Load() {
				if ex == &local {
					x.exp = new(exporter)
					*x.exp = local // its frames name the copy's arrays, not local
				}
				return finMore
			}
		}
		e.chargeExport(ex)
		x.exp = nil
		v, _, err := e.heap.exportEnd(ex)
		if err != nil {
			x.trap = err.(TrapInfo)
			return finTrapped
		}
		x.out, x.outHost = v, ex.hostBytes
	}
	e.state = stCompleted
	return finDone
}

// ResultHostBytes returns v.HostBytes() of the reference result v that
// Result returns, counted while it was copied out of the heap (no walk of
// the copy), or 0 when there is none.
func (e *Exec) ResultHostBytes() int64 {
	if e.state != stCompleted || e.resT != TRef {
		return 0
	}
	return e.x().outHost
}

// chargeExport charges the task what the export ex has done since the
// last charge, once the copy is worth more than copyFree.
func (e *Exec) chargeExport(ex *exporter) {
	if ex.c.units > copyFree {
		e.left -= ex.c.units - ex.charged
		ex.charged = ex.c.units
	}
}

// CompleteIfRoomMore is CompleteIfRoom in bounded steps: a reference
// result that is a ref array is imported a step of about copyStep
// reductions a call (owed: TakeCopyCharge), and more is true while steps
// remain: the request stays pending, and the caller calls again with the
// same v (which the import holds) until more is false; room and err are
// then CompleteIfRoom's. Any other result completes in one call. A task
// dropped between two calls (Recycle) frees what the import made with its
// heap.
func (e *Exec) CompleteIfRoomMore(v Value) (more, room bool, err error) {
	return e.CompleteIfRoomMoreHeld(v, nil)
}

// ImportHolder is what a caller of CompleteIfRoomMoreHeld keeps with an
// import in steps: DropImport is called (by whoever frees the task: Free,
// Recycle) when the task is dropped before the import ended; what the
// import made goes with the heap.
type ImportHolder interface{ DropImport() }

// CompleteIfRoomMoreHeld is CompleteIfRoomMore that keeps held with an
// import of more than one step until it ends (ImportHeld returns it
// meanwhile), and tells it if the task is dropped first. held is not
// kept for a result that completes in one call.
func (e *Exec) CompleteIfRoomMoreHeld(v Value, held ImportHolder) (more, room bool, err error) {
	var im *importer
	if e.rare != nil {
		im = e.rare.imp
	}
	if im == nil {
		if e.state != stRequest || e.reqDst < 0 || e.reqDstT != TRef || v.kind != KindArrayRef {
			room, err := e.complete(v, true)
			return false, room, err
		}
		im = new(importer)
		e.heap.importStart(v, im)
		im.held = held
		e.x().imp = im
	}
	done := e.heap.importRun(im, copyStep)
	if im.units > copyFree { // as owe, for the copy as a whole
		e.x().copied += im.units - im.owed
		im.owed = im.units
	}
	if !done {
		return true, true, nil
	}
	e.rare.imp = nil
	if im.err != nil {
		ti := e.reqTrapInfo(im.err).(TrapInfo)
		if ti.Code == TrapHeapLimit {
			return false, false, ti // the request stays pending, the heap as it was
		}
		return false, true, e.trapRequest(ti)
	}
	e.state = stReady
	e.setAbs(e.frames[e.fp].base+int(e.reqDst), im.root, TRef)
	return false, true, nil
}

// ImportHeld returns the holder given to CompleteIfRoomMoreHeld of the
// import under way at the pending request, or nil when there is none.
func (e *Exec) ImportHeld() ImportHolder {
	if e.rare == nil || e.rare.imp == nil {
		return nil
	}
	return e.rare.imp.held
}

// dropCopies ends the copies under way of a task that is being freed:
// what an export (a result, a request's argument) reserved of the
// engine's budget is given back, an import's holder is told (what the
// import made goes with the heap).
func (e *Exec) dropCopies() {
	if e.rare == nil {
		return
	}
	if ex := e.rare.exp; ex != nil {
		e.heap.exportEnd(ex)
		e.rare.exp = nil
	}
	if a := e.rare.arg; a != nil {
		e.heap.exportEnd(&a.ex)
		e.rare.arg = nil
	}
	if im := e.rare.imp; im != nil && im.held != nil {
		im.held.DropImport()
	}
	e.rare.imp = nil
}
