package vmloop

import (
	"errors"
	"fmt"
	"math"
)

// ---------------------------------------------------------------------------
// Intrinsic requests.
//
// After SigIntrinsic, Request describes the pending request and the
// scheduler reads its arguments with ArgI64, ArgF64, ArgValue and ArgObj,
// then completes it with Complete (a value), Raise (a Throw at the request)
// or SetTrap, now or after the task waited, and runs the task again. Run
// without any of them completes the request with no value (a destination
// register, if any, is zeroed: 0, 0.0 or the null handle).
//
// Register mapping (Base, NArgs and Func are the Request fields; argument i
// is what ArgX(i) reads, "dst" is the register Complete writes):
//
//	opcode            Base  NArgs  arguments                       dst
//	spawn a,C,D       a     C      a..a+C-1 typed by Funcs[D]      a (ref: the task, Ext(KindTask, obj)); Func = D
//	joini a,b         a     1      0: b (ref task)                 a (i64)
//	joinf a,b         a     1      0: b (ref task)                 a (f64)
//	joinr a,b         a     1      0: b (ref task)                 a (ref, imported)
//	joinv a           a     1      0: a (ref task)                 none (the value is dropped)
//	outcome a,b       a     1      0: b (ref task)                 a (i64)
//	yield             0     0      -                               none
//	cancel a          a     1      0: a (ref task)                 none
//	cancelled a       a     0      -                               a (i64)
//	evnew a           a     0      -                               a (ref: the event, Ext(KindEvent, obj))
//	evwait a          a     1      0: a (ref event)                none
//	evsignal a        a     1      0: a (ref event)                none
//	evbcast a         a     1      0: a (ref event)                none
//	intr a,C,D        a     C      a..a+C-1 typed by Intr.Params   a if Intr.Result != void
//
// Request.Intr is BuiltinIntrinsic(op) for the builtins and the resolved
// import Intrinsics[D].Resolved for INTR.

// setRequest records the request made by the intrinsic instruction ins at pc
// of the current frame (frames[fp] is up to date).
func (e *Exec) setRequest(ins Instr, pc int) {
	op := ins.Op()
	a := ins.A()
	q := &e.req
	*q = Request{Op: op, Base: a}
	e.reqPC = int32(pc)
	e.reqArg0 = a
	e.reqWin = false
	e.reqDst = -1
	e.reqDstT = TVoid
	switch op {
	case SPAWN:
		q.Intr = BuiltinIntrinsic(op)
		q.NArgs = int16(ins.C())
		q.Func = int32(ins.D())
		e.reqWin = true
		// The handle's register, or -1 (no destination) for a detached
		// spawn: B is 0 or SpawnDetached (1), verified, so no branch.
		e.reqDst, e.reqDstT = int32(a)|-int32(ins.B()), TRef
		e.state = stRequest
		return
	case INTR:
		q.Intr = e.prog.Intrinsics[ins.D()].Resolved
		q.NArgs = int16(ins.C())
		e.reqWin = true
	case JOINI, JOINF, JOINR, OUTCOME:
		q.Intr = BuiltinIntrinsic(op)
		q.NArgs = 1
		e.reqArg0 = ins.B()
	case YIELD:
		q.Intr = BuiltinIntrinsic(op)
		q.Base = 0
	default: // JOINV CANCEL CANCELLED EVNEW EVWAIT EVSIGNAL EVBCAST
		q.Intr = BuiltinIntrinsic(op)
		q.NArgs = int16(len(q.Intr.Params))
	}
	if q.Intr.Result != TVoid {
		e.reqDst, e.reqDstT = int32(a), q.Intr.Result
	}
	e.state = stRequest
}

// Request returns the pending intrinsic request, or nil when there is none.
// The pointer stays valid until the request is completed.
func (e *Exec) Request() *Request {
	if e.state != stRequest {
		return nil
	}
	return &e.req
}

// reqParams returns the parameter types of the pending request's
// arguments: the spawned function's for SPAWN, else the intrinsic's.
func (e *Exec) reqParams() []Type {
	if e.req.Op == SPAWN {
		return e.prog.Funcs[e.req.Func].Params
	}
	return e.req.Intr.Params
}

// argReg returns the absolute register index of argument i and checks
// that it exists and has type t.
func (e *Exec) argReg(i int, t Type, op string) int {
	if e.state != stRequest || uint(i) >= uint(e.req.NArgs) || t != TVoid && e.reqParams()[i] != t {
		e.badArg(i, op) // cold: the checks' messages stay out of this frame
	}
	r := int(e.reqArg0)
	if e.reqWin {
		r = int(e.req.Base) + i
	}
	return e.frames[e.fp].base + r
}

// badArg panics with what argReg found wrong with argument i.
//
//go:noinline
func (e *Exec) badArg(i int, op string) {
	if e.state != stRequest {
		panic("vmloop: " + op + ": no pending intrinsic request")
	}
	if i < 0 || i >= int(e.req.NArgs) {
		panic(fmt.Sprintf("vmloop: %s: argument %d out of range (%s has %d)", op, i, e.req.Op, e.req.NArgs))
	}
	panic(fmt.Sprintf("vmloop: %s: argument %d of %s is %s", op, i, e.req.Op, e.reqParams()[i]))
}

// ArgI64 returns argument i of the pending request, an i64. It panics if
// there is no such argument or it is not an i64 (a host bug: a worker
// turns host panics into TrapHostPanic).
func (e *Exec) ArgI64(i int) int64 {
	return int64(e.getAbs(e.argReg(i, TI64, "ArgI64"), TI64))
}

// ArgF64 returns argument i of the pending request, an f64. It panics like
// ArgI64.
func (e *Exec) ArgF64(i int) float64 {
	return math.Float64frombits(e.getAbs(e.argReg(i, TF64, "ArgF64"), TF64))
}

// ArgValue returns argument i of the pending request as a Value: i64 and
// f64 as such, a reference copied out of the heap (bytes and arrays deep,
// strings shared; the null handle is Void). A bad handle is a TrapInfo
// error (TrapHandle).
func (e *Exec) ArgValue(i int) (Value, error) {
	ri := e.argReg(i, TVoid, "ArgValue")
	t := e.reqParams()[i]
	bits := e.getAbs(ri, t)
	switch t {
	case TI64:
		return Value{kind: KindI64, bits: bits}, nil
	case TF64:
		return Value{kind: KindF64, bits: bits}, nil
	}
	v, units, err := e.heap.exportN(bits, e.heap.bnd.limit)
	e.owe(units)
	if err != nil {
		return Value{}, e.reqTrapInfo(err)
	}
	return v, nil
}

// ArgObj returns the runtime object behind argument i of the pending
// request, a ref that must name an object of kind k: the scheduler's
// object for KindTask, KindEvent and KindExt, the contents (a string) for
// KindString. Other kinds are read with ArgValue. A null, stale, foreign
// or wrong-kind handle is a TrapInfo error (TrapHandle).
func (e *Exec) ArgObj(i int, k Kind) (any, error) {
	ri := e.argReg(i, TRef, "ArgObj")
	x := e.getAbs(ri, TRef)
	switch k {
	case KindTask, KindEvent:
		if sl := e.heap.refOf(x, refWord(k)); sl != nil {
			return sl.obj, nil
		}
	case KindExt, KindString:
	default:
		return nil, fmt.Errorf("vmloop: ArgObj: %s objects are read with ArgValue", k)
	}
	o := e.heap.get(x, k)
	if o == nil {
		return nil, e.reqTrapInfo(TrapInfo{Code: TrapHandle, Msg: e.heap.explain(x, k)})
	}
	if k == KindString {
		return o.str(), nil
	}
	return o.x, nil
}

// ArgExt returns the host object behind argument i of the pending request,
// a ref, when it names a live KindExt object (a socket or file handle, a
// periodic job); ok is false for any other kind or a bad handle. It never
// traps and allocates nothing.
func (e *Exec) ArgExt(i int) (obj any, ok bool) {
	x := e.getAbs(e.argReg(i, TRef, "ArgExt"), TRef)
	if o := e.heap.get(x, KindExt); o != nil {
		return o.x, true
	}
	return nil, false
}

// SetTrapErr sets e's trap from err: the TrapInfo it wraps, else an
// intrinsic trap with its message (SetTrap).
func (e *Exec) SetTrapErr(err error) {
	var ti TrapInfo
	if errors.As(err, &ti) {
		e.SetTrap(ti.Code, ti.Msg)
		return
	}
	e.SetTrap(TrapIntrinsic, err.Error())
}

// reqTrapInfo places a TrapInfo error at the request's instruction.
func (e *Exec) reqTrapInfo(err error) error {
	var ti TrapInfo
	if !errors.As(err, &ti) {
		ti = TrapInfo{Code: TrapIntrinsic, Msg: err.Error()}
	}
	e.placeTrap(&ti, int(e.reqPC))
	return ti
}

// Complete completes the pending request with its result v and makes the
// task runnable. v must fit the destination register: KindI64 for an i64
// destination, KindF64 for f64, a reference kind (or Void, the null handle)
// for ref, which is imported into the heap. A request without a
// destination drops v. A mismatch (TrapKind) or a full heap (TrapHeapLimit)
// traps the task: the TrapInfo is returned, Trap reports it and the next
// Run returns SigTrapped.
func (e *Exec) Complete(v Value) error {
	_, err := e.complete(v, false)
	return err
}

// CompleteVoid is Complete(Void()): a request without a destination (an
// event's signal or wait, a sleep) completes without a Value made, copied
// and looked at (BenchmarkPingPong).
func (e *Exec) CompleteVoid() error {
	if e.state == stRequest && e.reqDst < 0 {
		e.state = stReady
		return nil
	}
	return e.Complete(Void())
}

// CompleteIfRoom is Complete for a result the task did not make itself (a
// joined task's value), whose size it cannot control: when the heap cannot
// take v (the heap limit, the handle table), the request stays pending,
// the heap is as it was and room is false, with the TrapHeapLimit that
// Complete would have trapped with as err; the caller throws it instead
// (Raise). Every other outcome is Complete's.
func (e *Exec) CompleteIfRoom(v Value) (room bool, err error) {
	return e.complete(v, true)
}

// CompleteScalar is Complete of a void, i64 or f64 value given as its
// kind and bits (a joined task's inline result): no Value is built for
// the common case of a destination of that type.
func (e *Exec) CompleteScalar(k Kind, bits uint64) error {
	if e.state == stRequest && e.reqDst >= 0 && (e.reqDstT == TI64 && k == KindI64 || e.reqDstT == TF64 && k == KindF64) {
		e.state = stReady
		e.setAbs(e.frames[e.fp].base+int(e.reqDst), bits, e.reqDstT)
		return nil
	}
	_, err := e.complete(Value{kind: k, bits: bits}, false)
	return err
}

// complete is Complete; with refuse, a heap that cannot take v leaves the
// request pending (CompleteIfRoom).
func (e *Exec) complete(v Value, refuse bool) (room bool, err error) {
	if e.state != stRequest {
		return true, errors.New("vmloop: Complete: no pending intrinsic request")
	}
	e.state = stReady
	if e.reqDst < 0 {
		return true, nil
	}
	var bits uint64
	switch t := e.reqDstT; {
	case t == TI64 && v.kind == KindI64, t == TF64 && v.kind == KindF64:
		bits = v.bits
	case t == TRef && (v.kind == KindVoid || v.kind.Type() == TRef):
		h, units, err := e.heap.importValueN(v)
		e.owe(units)
		if err != nil {
			ti := e.reqTrapInfo(err).(TrapInfo)
			if refuse && ti.Code == TrapHeapLimit {
				e.state = stRequest // importValue released what it made
				return false, ti
			}
			return true, e.trapRequest(ti)
		}
		bits = h
	default:
		return true, e.trapRequest(e.reqTrapInfo(TrapInfo{Code: TrapKind,
			Msg: fmt.Sprintf("%s result is %s, destination register r%d is %s", e.req.Op, v.kind, e.reqDst, e.reqDstT)}).(TrapInfo))
	}
	e.setAbs(e.frames[e.fp].base+int(e.reqDst), bits, e.reqDstT)
	return true, nil
}

// trapRequest traps the task with ti and returns it.
func (e *Exec) trapRequest(ti TrapInfo) error {
	e.x().trap = ti
	e.state = stTrapped
	return ti
}

// abandonRequest completes a pending request without a value: Run was
// called without Complete, Raise or SetTrap.
func (e *Exec) abandonRequest() {
	e.state = stReady
	if e.reqDst >= 0 {
		e.setAbs(e.frames[e.fp].base+int(e.reqDst), 0, e.reqDstT)
	}
}

// Raise completes the pending request by throwing err (a KindError value)
// at the requesting instruction: the error is imported into the heap and
// the innermost covering handler of that instruction, or of a caller's
// CALL, receives it. It reports whether a handler caught it; if not, the
// task has ended with SigThrown and Thrown returns err. Raising at an
// instruction that cannot throw (outcome, yield, cancelled, events), or a
// value that is not an error, or with no request pending, traps the task
// (TrapIntrinsic) instead, and so does a full heap (TrapHeapLimit); caught
// is false then too, so tell the two endings apart by Trap().Code (or by
// the signal of the next Run: SigThrown or SigTrapped).
func (e *Exec) Raise(err Value) (caught bool) {
	if e.state != stRequest {
		if e.state == stReady {
			ti := TrapInfo{Code: TrapIntrinsic, Msg: "Raise without a pending intrinsic request"}
			ti.Func, ti.PC = e.Where()
			e.x().trap = ti
			e.state = stTrapped
		}
		return false
	}
	if info, _ := e.req.Op.Info(); info.Flags&FlagMayThrow == 0 {
		e.trapRequest(e.reqTrapInfo(TrapInfo{Code: TrapIntrinsic, Msg: fmt.Sprintf("%s cannot throw (raised %s)", e.req.Op, err)}).(TrapInfo))
		return false
	}
	if err.kind != KindError {
		e.trapRequest(e.reqTrapInfo(TrapInfo{Code: TrapIntrinsic, Msg: fmt.Sprintf("raised value is %s, want error", err.kind)}).(TrapInfo))
		return false
	}
	if err.aux == ErrKindResource {
		// The error that says the engine's memory ran out (a refused
		// spawn) comes with a chunk of room for its handler beside it,
		// counted past the limit if need be: the task must be able to
		// catch it and look at it (its heap's limit still applies; the
		// grant is given back as usual). Even when the error itself fits,
		// what is left may not hold the handler's first string.
		e.heap.room(int64(err.Size()) + budgetChunk)
	}
	h, ierr := e.heap.importValue(err)
	if ierr != nil {
		e.trapRequest(e.reqTrapInfo(ierr).(TrapInfo))
		return false
	}
	e.state = stReady
	// The frames popped are not charged: Raise runs between slices, with
	// no budget (the unwind is bounded by Limits.MaxFrames all the same).
	caught, _ = e.unwind(h, int(e.reqPC))
	return caught
}

// SetTrap completes the pending request by trapping the task at the
// requesting instruction. If the task has already trapped (a Complete,
// Raise or argument read that failed), the trap keeps its place and takes
// the new code and message; otherwise (no request pending) it is placed at
// the current pc.
func (e *Exec) SetTrap(code TrapCode, msg string) {
	ti := TrapInfo{Code: code, Msg: msg}
	switch e.state {
	case stRequest:
		ti = e.reqTrapInfo(ti).(TrapInfo)
	case stTrapped:
		prev := e.x().trap
		ti.Func, ti.PC, ti.File, ti.Line = prev.Func, prev.PC, prev.File, prev.Line
	default:
		if len(e.frames) == 0 {
			ti.Func, ti.PC = e.Where()
		} else {
			e.placeTrap(&ti, e.frames[e.fp].pc)
		}
	}
	e.x().trap = ti
	e.state = stTrapped
}

// unwind raises the error handle h at pc of the current frame (frames[fp]
// up to date): the first handler of the function whose range covers pc
// receives it; otherwise the frame is popped and the caller's CALL
// instruction is tried, up to the entry function. It reports whether a
// handler caught the error; if none did, the task ends (stThrown) with the
// error copied out as Thrown. popped is the number of frames it popped.
//
// Each frame costs O(1) whatever the number of handlers (the verifier's
// per-pc table, Function.handlerAt), so one unwind is bounded by
// Limits.MaxFrames; THROW charges one reduction per frame popped
// (docs/ISA.md; TestThrowChargesFrames).
func (e *Exec) unwind(h uint64, pc int) (caught bool, popped int64) {
	x := e.x()
	x.unwound = x.unwound[:0]
	depth := e.fp + 1
	for {
		f := &e.frames[e.fp]
		fn := &e.prog.Funcs[f.fn]
		if fn.handlerAt != nil {
			if i := fn.handlerAt[pc]; i >= 0 {
				hd := &fn.Handlers[i]
				f.pc = int(hd.Target)
				e.setAbs(f.base+int(hd.Reg), h, TRef)
				return true, popped
			}
		}
		if len(x.unwound) < MaxStackFrames {
			x.unwound = append(x.unwound, frame{fn: f.fn, pc: pc})
		}
		if e.fp == 0 {
			x.thrownAt = Stack{Frames: make([]StackFrame, len(x.unwound)), Depth: depth}
			for i, u := range x.unwound {
				x.thrownAt.Frames[i] = e.stackFrame(u.fn, u.pc)
			}
			v, err := e.heap.export(h, e.heap.bnd.limit)
			if err != nil { // cannot happen for a checked error handle
				v = Err(ErrKindError, err.Error())
			}
			e.x().out = v
			e.state = stThrown
			return false, popped
		}
		callee := f.base
		e.fp--
		popped++
		f = &e.frames[e.fp]
		pc = f.pc - 1 // the CALL (or TAILCALL-replaced CALL) that made the callee
		// registers from the window base up are undefined in the handler
		e.clobberAbs(callee, f.base+e.prog.Funcs[f.fn].NRegs)
	}
}

// ArgBytes returns the live contents of argument i of the pending request,
// a ref naming a bytes object of the task's heap: not a copy, so that an
// I/O intrinsic can read into or write from it while the task waits. The
// slice must not be kept past the request's completion. A null, stale,
// foreign or wrong-kind handle is a TrapInfo error (TrapHandle).
func (e *Exec) ArgBytes(i int) ([]byte, error) {
	ri := e.argReg(i, TRef, "ArgBytes")
	x := e.getAbs(ri, TRef)
	o := e.heap.get(x, KindBytes)
	if o == nil {
		return nil, e.reqTrapInfo(TrapInfo{Code: TrapHandle, Msg: e.heap.explain(x, KindBytes)})
	}
	return o.bytes(), nil
}

// Introspection of a pending request, for reports: what a suspended task
// asked for and where. Read only; call it from the goroutine that runs
// the task, or while that task cannot run (a stopped world).

// ArgName returns the source name of the register that holds argument i
// of the pending request (debug information: Function.RegNames), or ""
// when the program does not say. It panics like ArgI64 when there is no
// such argument.
func (e *Exec) ArgName(i int) string {
	f := e.frames[e.fp]
	r := e.argReg(i, TVoid, "ArgName") - f.base
	if names := e.prog.Funcs[f.fn].RegNames; r >= 0 && r < len(names) {
		return names[r]
	}
	return ""
}

// RequestStack is ProfileStack with the innermost frame at the
// instruction of the last request after that request completed: a
// completed request leaves the frame's pc just past it. When the frame
// is no longer there (the request threw and unwound), it is ProfileStack.
func (e *Exec) RequestStack(dst []ProfFrame) []ProfFrame {
	if len(e.frames) == 0 || e.prog == nil {
		return dst
	}
	if e.state == stRequest || e.frames[e.fp].pc != int(e.reqPC)+1 {
		return e.ProfileStack(dst)
	}
	return e.appendStack(dst, int(e.reqPC))
}

// RequestAt returns the intrinsic that the instruction at pc of function
// fn asks for when that instruction is one a task can wait in (intr, a
// join, outcome, evwait), or nil: a suspended task has published the pc
// just past it. The program must be verified (imports resolved).
func (p *Program) RequestAt(fn, pc int) *Intrinsic {
	if fn < 0 || fn >= len(p.Funcs) || pc < 0 || pc >= len(p.Funcs[fn].Code) {
		return nil
	}
	ins := p.Funcs[fn].Code[pc]
	switch op := ins.Op(); op {
	case INTR:
		if d := int(ins.D()); d >= 0 && d < len(p.Intrinsics) {
			return p.Intrinsics[d].Resolved
		}
	case JOINI, JOINF, JOINR, JOINV, OUTCOME, EVWAIT:
		return BuiltinIntrinsic(op)
	}
	return nil
}
