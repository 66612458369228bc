package vmloop

import (
	"fmt"
	"math"
	"unsafe"
)

// The out-of-line half of the interpreter: step runs every instruction
// that leaves the inline path of Run (allocation, bulk operations, throws,
// intrinsics, stack growth, traps), with the Exec as the only state.

// ctl tells Run how to continue after step.
type ctl uint8

const (
	ctlNext      ctl = iota // continue at frames[fp].pc
	ctlSafePoint            // continue, but this was a safe point: preempt if the budget is spent
	ctlExit                 // leave Run with Signal(c - ctlExit); the state is saved
)

func exit(s Signal) ctl { return ctlExit + ctl(s) }

// step runs ins, whose pc is frames[fp].pc-1 and whose base cost is
// already charged to e.left, and updates the Exec.
func (e *Exec) step(ins Instr) ctl {
	// The requests answered in the loop, before the frame's view, which
	// they do not need (BenchmarkPingPong, BenchmarkSpawnJoin). Not in
	// Run's own switch: a case there that calls out cost fib(30) 4 %
	// (BenchmarkFib30), the loop's values kept live across the call.
	switch op := ins.Op(); op {
	case EVSIGNAL, EVWAIT:
		if c, ok := e.eventInVM(op == EVWAIT, e.curRef(ins.A()), ins, e.frames[e.fp].pc-1); ok {
			return c
		}
	case YIELD:
		if e.heap.holds&trefRecord != 0 {
			// A task record's yield needs no dispatcher: the worker
			// requeues the task (BenchmarkYieldMany).
			return exit(SigYield)
		}
	case SPAWN, JOINI, JOINF, JOINV:
		pc := e.frames[e.fp].pc - 1
		e.setRequest(ins, pc)
		var c ctl
		var ok bool
		if op == SPAWN {
			c, ok = e.spawnInVM(pc)
		} else {
			c, ok = e.joinInVM(e.curRef(e.reqArg0), pc) // the target's register
		}
		if ok {
			return c
		}
		return exit(SigIntrinsic)
	}
	cur := &e.frames[e.fp]
	pc := cur.pc - 1
	f := &e.prog.Funcs[cur.fn]
	r := e.view(cur.base, f.NRegs)
	h := &e.heap
	st := opOK
	switch op := ins.Op(); op {
	case LDS:
		x, ok := e.lds(int(ins.D()))
		if !ok {
			return e.trapped(pc)
		}
		r.setRef(ins.A(), x)
	case DIV, REM:
		b, c := r.i(ins.B()), r.i(ins.C())
		switch {
		case c == 0:
			e.x().trap = TrapInfo{Code: TrapDivZero, Msg: fmt.Sprintf("%s %d by 0", op, b)}
			return e.trapped(pc)
		case c == -1 && b == math.MinInt64:
			e.x().trap = TrapInfo{Code: TrapOverflow, Msg: fmt.Sprintf("%s %d by -1", op, b)}
			return e.trapped(pc)
		case op == DIV:
			r.setI(ins.A(), b/c)
		default:
			r.setI(ins.A(), b%c)
		}

	case CALL:
		if e.fp+1 >= int(e.maxFrames) {
			e.x().trap = TrapInfo{Code: TrapStackOverflow, Msg: fmt.Sprintf("call depth limit of %d frames", e.maxFrames)}
			return e.trapped(pc)
		}
		base := cur.base + int(ins.A())
		callee := &e.prog.Funcs[ins.D()]
		need := base + headroom(callee.NRegs)
		if (e.fp+1 == len(e.frames) && !e.growFrames()) || (need > len(e.regs) && !e.growRegs(need, false)) {
			e.x().trap = TrapInfo{Code: TrapHeapLimit, Msg: e.heap.memMsg("call stack", e.stackBytes(max(need, cap(e.regs)), max(2*len(e.frames), cap(e.frames))))}
			return e.trapped(pc)
		}
		e.fp++
		e.frames[e.fp] = frame{fn: int(ins.D()), base: base}
		e.view(base, callee.NRegs).enter(len(callee.Params))
		return ctlSafePoint
	case RET, RETV:
		var v uint64
		if op == RET {
			v = r.get(ins.A(), f.Result)
		}
		if e.fp > 0 { // Run returns to callers inline; kept for completeness
			from := 0
			if op == RET {
				r.set(0, v, f.Result)
				from = 1
			}
			e.fp--
			c := &e.frames[e.fp]
			e.clobberAbs(cur.base+from, c.base+e.prog.Funcs[c.fn].NRegs)
			return ctlSafePoint
		}
		switch e.finish(v, f.Result) {
		case finTrapped:
			return e.trapped(pc)
		case finMore:
			cur.pc = pc // the export goes on at the RET on the next Run
			return exit(SigPreempted)
		}
		return exit(SigCompleted)

	case NEWERR:
		s := h.get(r.ref(ins.B()), KindString)
		if s == nil {
			e.badHandle(r.ref(ins.B()), KindString)
			return e.trapped(pc)
		}
		x := h.newError(ErrKindError, s.str())
		if x == 0 {
			e.x().trap = h.allocFail(objSize(s.str(), ErrKindError, 0, 0))
			return e.trapped(pc)
		}
		r.setRef(ins.A(), x)
	case THROW:
		x := r.ref(ins.A())
		if h.get(x, KindError) == nil {
			e.badHandle(x, KindError)
			return e.trapped(pc)
		}
		caught, popped := e.unwind(x, pc)
		e.left -= popped // one reduction per frame popped
		if caught {
			return ctlSafePoint
		}
		return exit(SigThrown)
	case ERRMSG, ERRKIND:
		o := h.get(r.ref(ins.B()), KindError)
		if o == nil {
			e.badHandle(r.ref(ins.B()), KindError)
			return e.trapped(pc)
		}
		s := o.str()
		if op == ERRKIND {
			s, _ = o.x.(string)
		}
		x := h.newString(s)
		if x == 0 {
			e.x().trap = h.allocFail(objSize(s, "", 0, 0))
			return e.trapped(pc)
		}
		r.setRef(ins.A(), x)

	// the inline fast paths of these send only failures here
	case SLEN, BLEN, BGET, BSET, ALEN, AGETI, AGETF, AGETR, ASETI, ASETF:
		st = e.access(ins, r)

	case SCONCAT, ITOS, STOB, BTOS, BNEW, BSLICE, ANEW, LDB:
		e.left, st = e.allocOp(ins, r, pc, e.left)
	case BFINDR, BCMP, BCASECMP, BTOI, STOI, ITOB:
		e.left, st = e.bytesOp(ins, r, pc, e.left)
	case SEQ, BEQ, BFIND, BCOPY:
		e.left, st = e.bulkOp(ins, r, pc, e.left)
	case ASETR:
		e.left, st = e.asetr(ins, r, pc, e.left)

	case INTR:
		in := e.prog.Intrinsics[ins.D()].Resolved
		if k := vmKindOf(in.ID); k != vmRequest {
			if k == vmAlways {
				e.left, st = e.inVMOp(in, ins, r, e.left)
				break
			}
			if c, ok := e.answerInVM(in, ins, r, pc); ok {
				return c
			}
		}
		e.setRequest(ins, pc)
		return exit(SigIntrinsic)
	case JOINR, OUTCOME, YIELD, CANCEL, CANCELLED,
		EVNEW, EVWAIT, EVSIGNAL, EVBCAST: // the events' answers in the loop: above
		e.setRequest(ins, pc)
		return exit(SigIntrinsic)

	case FREE:
		if !h.release(r.ref(ins.A())) {
			e.badHandle(r.ref(ins.A()), KindVoid)
			return e.trapped(pc)
		}

	default:
		e.x().trap = TrapInfo{Code: TrapUnverified, Msg: fmt.Sprintf("opcode %s does not run out of line", op)}
		if _, ok := op.Info(); !ok {
			e.x().trap.Msg = fmt.Sprintf("undefined opcode %d", uint8(op))
		}
		return e.trapped(pc)
	}
	switch st {
	case opOK:
		return ctlNext
	case opPreempt:
		cur.pc = pc // resume the instruction on the next Run
		return exit(SigPreempted)
	}
	return e.trapped(pc)
}

// trapped ends the task with the trap in e.x().trap (Code and Msg set) at pc
// of the current function.
func (e *Exec) trapped(pc int) ctl {
	x := e.x()
	e.placeTrap(&x.trap, pc)
	e.state = stTrapped
	x.bulk = bulkState{} // drops a chunked instruction's destination
	return exit(SigTrapped)
}

// access runs the handle reads and writes whose inline fast path failed:
// it traps on a bad handle or index (and would complete the instruction
// if neither were bad).
func (e *Exec) access(ins Instr, r regs) opStatus {
	h := &e.heap
	op := ins.Op()
	hr, ix := ins.B(), ins.C() // handle and index registers of the reads
	var want Kind
	switch op {
	case SLEN:
		want = KindString
	case BLEN, BGET:
		want = KindBytes
	case BSET:
		want, hr, ix = KindBytes, ins.A(), ins.B()
	case ALEN:
		want = anyArray
	case AGETI, AGETF, AGETR:
		want = KindArrayI64 + Kind(op-AGETI)
	case ASETI, ASETF:
		want, hr, ix = KindArrayI64+Kind(op-ASETI), ins.A(), ins.B()
	}
	x := r.ref(hr)
	var o *object
	if want == anyArray {
		o = h.getArray(x)
	} else {
		o = h.get(x, want)
	}
	if o == nil {
		e.badHandle(x, want)
		return opTrap
	}
	n := int(o.n) // bytes, array elements or string bytes
	switch op {
	case SLEN:
		r.setI(ins.A(), int64(n))
		return opOK
	case BLEN, ALEN:
		r.setI(ins.A(), int64(n))
		return opOK
	}
	i := r.i(ix)
	if uint64(i) >= uint64(n) {
		e.x().trap = TrapInfo{Code: TrapBounds, Msg: fmt.Sprintf("%s index %d, length %d", op, i, n)}
		return opTrap
	}
	switch op {
	case BGET:
		r.setI(ins.A(), int64(o.bytes()[i]))
	case BSET:
		o.bytes()[i] = byte(r.i(ins.C()))
	case AGETI, AGETF, AGETR:
		r.set(ins.A(), o.arr()[i], elemType[want-KindArrayI64])
	case ASETI, ASETF:
		o.arr()[i] = r.get(ins.C(), elemType[want-KindArrayI64])
	}
	return opOK
}

// opStatus is how an out-of-line instruction handler ended.
type opStatus uint8

const (
	opOK      opStatus = iota
	opTrap             // e.x().trap holds Code and Msg
	opPreempt          // a bulk instruction stopped between chunks
)

// elemType is the register type of the elements of array kinds i64, f64, ref.
var elemType = [3]Type{TI64, TF64, TRef}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// ftoi truncates f toward zero, saturating at the int64 range; NaN is 0.
func ftoi(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f >= 0x1p63:
		return math.MaxInt64
	case f <= -0x1p63:
		return math.MinInt64
	}
	return int64(f)
}

// badHandle records the TrapHandle for handle x used as kind want.
func (e *Exec) badHandle(x uint64, want Kind) {
	e.x().trap = TrapInfo{Code: TrapHandle, Msg: e.heap.explain(x, want)}
}

// growFrames doubles the frame stack: within its capacity when it has
// room, else in a new allocation of whole cache lines (see Isolate).
// A new allocation is counted in the engine's budget first: false (and
// no change) when the budget cannot cover it.
func (e *Exec) growFrames() bool {
	n := 2 * len(e.frames)
	if n <= cap(e.frames) {
		e.frames = e.frames[:n]
		return true
	}
	if !e.heap.budget().Take(e.stackGrowth(cap(e.regs), lineFrames(n))) {
		return false
	}
	f := make([]frame, n, lineFrames(n))
	copy(f, e.frames)
	e.frames = f
	return true
}

// lds returns the task's handle to string constant d, made on first use
// and again after a FREE.
func (e *Exec) lds(d int) (uint64, bool) {
	rr := e.x()
	if rr.kstr == nil {
		rr.kstr = make([]uint64, len(e.prog.KStr))
	}
	if x := rr.kstr[d]; x != 0 && e.heap.get(x, KindString) != nil {
		return x, true
	}
	s := e.prog.KStr[d]
	x := e.heap.newString(s)
	if x == 0 {
		rr.trap = e.heap.allocFail(objSize(s, "", 0, 0))
		return 0, false
	}
	rr.kstr[d] = x
	return x, true
}

// bulkOp runs SEQ, BEQ, BFIND and BCOPY in 64 KiB chunks, charging
// ceil(k/64) per chunk of k bytes. Between chunks, when the budget is spent
// or Stop was called, it saves its progress and returns opPreempt; the
// loop leaves pc at the instruction, and the next Run resumes it here (the
// base cost of the instruction is not charged again).
func (e *Exec) bulkOp(ins Instr, r regs, pc int, left int64) (int64, opStatus) {
	h := &e.heap
	fnIdx := e.frames[e.fp].fn
	var done int64
	var fs *findState
	if e.x().bulk.on && e.x().bulk.fn == fnIdx && e.x().bulk.pc == pc {
		done, fs = e.x().bulk.done, e.x().bulk.find
		left++ // the instruction was charged when it started
	}
	e.x().bulk.on = false
	spent := func(d, n int64) bool { // d of n bytes done: stop here?
		if d < n && (left <= 0 || e.stop.Load()) {
			e.x().bulk = bulkState{on: true, fn: fnIdx, pc: pc, done: d}
			return true
		}
		return false
	}
	switch op := ins.Op(); op {
	case SEQ, BEQ:
		var b, c string
		if op == SEQ {
			bo, co := h.get(r.ref(ins.B()), KindString), h.get(r.ref(ins.C()), KindString)
			if bo == nil || co == nil {
				e.badPair(r.ref(ins.B()), bo == nil, r.ref(ins.C()), KindString)
				return left, opTrap
			}
			b, c = bo.str(), co.str()
		} else {
			bo, co := h.get(r.ref(ins.B()), KindBytes), h.get(r.ref(ins.C()), KindBytes)
			if bo == nil || co == nil {
				e.badPair(r.ref(ins.B()), bo == nil, r.ref(ins.C()), KindBytes)
				return left, opTrap
			}
			b, c = bytesView(bo.bytes()), bytesView(co.bytes())
		}
		eq := len(b) == len(c)
		n := int64(len(b))
		for eq && done < n {
			k := min(n-done, bulkChunk)
			eq = b[done:done+k] == c[done:done+k]
			done += k
			left -= charge(k)
			if eq && spent(done, n) {
				return left, opPreempt
			}
		}
		r.setI(ins.A(), b2i(eq))
	case BFIND:
		bo, co := h.get(r.ref(ins.B()), KindBytes), h.get(r.ref(ins.C()), KindBytes)
		if bo == nil || co == nil {
			e.badPair(r.ref(ins.B()), bo == nil, r.ref(ins.C()), KindBytes)
			return left, opTrap
		}
		hay, needle := bytesView(bo.bytes()), bytesView(co.bytes())
		start := r.i(ins.D0())
		if start < 0 || start > int64(len(hay)) {
			e.x().trap = TrapInfo{Code: TrapBounds, Msg: fmt.Sprintf("bfind start %d, length %d", start, len(hay))}
			return left, opTrap
		}
		res, l, pre := e.find(hay, needle, start, int64(len(hay)), done, fs, pc, left)
		if pre {
			return l, opPreempt
		}
		left = l
		r.setI(ins.A(), res)
	case BCOPY:
		dx, sx := r.ref(ins.A()), r.ref(ins.C())
		d, s := h.get(dx, KindBytes), h.get(sx, KindBytes)
		if d == nil || s == nil {
			e.badPair(dx, d == nil, sx, KindBytes)
			return left, opTrap
		}
		doff, soff, n := r.i(ins.B()), r.i(ins.D0()), r.i(ins.D1())
		if n < 0 || doff < 0 || soff < 0 || n > int64(len(d.bytes())) || doff > int64(len(d.bytes()))-n ||
			n > int64(len(s.bytes())) || soff > int64(len(s.bytes()))-n {
			e.x().trap = TrapInfo{Code: TrapBounds, Msg: fmt.Sprintf("bcopy %d bytes from [%d:] of length %d to [%d:] of length %d",
				n, soff, len(s.bytes()), doff, len(d.bytes()))}
			return left, opTrap
		}
		dst, src := d.bytes()[doff:doff+n], s.bytes()[soff:soff+n]
		backward := d == s && doff > soff // overlapping memmove: copy the tail first
		for done < n {
			k := min(n-done, bulkChunk)
			if backward {
				copy(dst[n-done-k:n-done], src[n-done-k:n-done])
			} else {
				copy(dst[done:done+k], src[done:done+k])
			}
			done += k
			left -= charge(k)
			if spent(done, n) {
				return left, opPreempt
			}
		}
	}
	return left, opOK
}

// badPair records the TrapHandle for the first bad one of two handles.
func (e *Exec) badPair(b uint64, bBad bool, c uint64, want Kind) {
	if bBad {
		e.badHandle(b, want)
	} else {
		e.badHandle(c, want)
	}
}

// bytesView returns the contents of b as a string without copying. The
// string is used only while b cannot change (inside one instruction).
func bytesView(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
