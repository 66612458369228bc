package vmloop

import (
	"github.com/jadevm/jade/internal/vmhook"
	"math"
	"unsafe"
)

// Run executes the task until it completes, throws, traps, reaches an
// intrinsic or is preempted, and returns the signal that says which.
//
// Preemption (docs/ISA.md): every instruction costs 1 reduction and a bulk
// instruction over n bytes ceil(n/64) more (ANEW, ASETR's cycle check and
// THROW charge their own measures of work: interp_long.go, Exec.unwind). After the control
// transfer of a taken backward branch, a CALL, a TAILCALL, a RET/RETV to a
// caller and a caught THROW, Run returns SigPreempted if the budget is
// spent (<= 0) or Stop was called; pc is then at the next instruction to
// run. Bulk instructions over more than one chunk (64 KiB, or 4,096
// elements of a cycle check) look at the budget after every chunk and,
// when it is spent, return SigPreempted with pc
// still at the instruction; the next Run resumes it where it stopped. An
// intrinsic returns SigIntrinsic with pc past it whatever the budget (the
// worker decides whether the task keeps running).
//
// After SigIntrinsic, complete the request (Complete, Raise, SetTrap)
// before the next Run; a Run without it completes the request with no
// value. After SigCompleted, SigThrown and SigTrapped, Run returns the same
// signal again without running anything.
//
// Shape of the loop. One switch over the opcode, which Go compiles to a
// jump table, runs the common instructions inline: moves, arithmetic,
// comparisons, branches, calls and returns, and the fast path of the
// handle reads and writes. None of them calls a function that returns
// into the loop, so the few live values (code, pc, budget, register frame)
// stay in machine registers. Everything else (allocation, bulk operations,
// throws, intrinsics, growth of the stacks, and every trap) leaves the
// inline path through the slow label: the state is written back to the
// Exec, step runs the instruction out of line, and the loop reloads its
// state. The steady state allocates nothing per instruction or call.
//
// When a native loop is registered (vmhook.SetLoop, package native) and the
// task did not opt out (SetNative), Run hands the slice to it first; it
// runs the hot subset in C with the same rule and returns here for the
// rest (native_hook.go).
func (e *Exec) Run(budget int64) Signal {
	switch e.state {
	case stReady:
	case stRequest:
		e.abandonRequest()
	case stCompleted:
		return SigCompleted
	case stThrown:
		return SigThrown
	default:
		return SigTrapped
	}
	if !jadecheck && e.wantNative() {
		if e.nativeSkip > 0 {
			e.nativeSkip--
		} else if loop := vmhook.Current(); loop != nil {
			// the C twin of this loop (native_hook.go); it may hand the
			// rest of the slice to the Go loop below
			sig, left, done := e.runNative(loop, budget)
			if done {
				return sig
			}
			budget = left
		}
	}

	// The current function and register base live in frames[fp], kept up
	// to date by calls and returns; its pc is written back when the loop
	// leaves the inline path.
	var (
		cur  = &e.frames[e.fp]
		code = e.prog.Funcs[cur.fn].Code
		pc   = cur.pc
		r    = e.view(cur.base, e.prog.Funcs[cur.fn].NRegs)
		left = budget
		ins  Instr
	)

run:
	for {
		ins = code[pc]
		pc++
		left--
		switch ins.Op() {
		case NOP:

		// data
		case MOVI:
			r.setI(ins.A(), r.i(ins.B()))
		case MOVF:
			r.setF(ins.A(), r.f(ins.B()))
		case MOVR:
			r.setRef(ins.A(), r.ref(ins.B()))
		case LDI:
			r.setI(ins.A(), int64(ins.D()))
		case LDK:
			r.setI(ins.A(), e.prog.KInt[ins.D()])
		case LDF:
			r.setF(ins.A(), e.prog.KFlt[ins.D()])
		case LDS:
			if d, rr := int(ins.D()), e.rare; rr != nil && d < len(rr.kstr) {
				if x := rr.kstr[d]; e.heap.get(x, KindString) != nil {
					r.setRef(ins.A(), x)
					continue
				}
			}
			goto slow

		// i64 arithmetic and logic
		case ADD:
			r.setI(ins.A(), r.i(ins.B())+r.i(ins.C()))
		case SUB:
			r.setI(ins.A(), r.i(ins.B())-r.i(ins.C()))
		case MUL:
			r.setI(ins.A(), r.i(ins.B())*r.i(ins.C()))
		case DIV:
			b, c := r.i(ins.B()), r.i(ins.C())
			if c == 0 || c == -1 && b == math.MinInt64 {
				goto slow
			}
			r.setI(ins.A(), b/c)
		case REM:
			b, c := r.i(ins.B()), r.i(ins.C())
			if c == 0 || c == -1 && b == math.MinInt64 {
				goto slow
			}
			r.setI(ins.A(), b%c)
		case NEG:
			r.setI(ins.A(), -r.i(ins.B()))
		case AND:
			r.setI(ins.A(), r.i(ins.B())&r.i(ins.C()))
		case OR:
			r.setI(ins.A(), r.i(ins.B())|r.i(ins.C()))
		case XOR:
			r.setI(ins.A(), r.i(ins.B())^r.i(ins.C()))
		case SHL:
			r.setI(ins.A(), r.i(ins.B())<<(r.i(ins.C())&63))
		case SHR:
			r.setI(ins.A(), int64(uint64(r.i(ins.B()))>>(r.i(ins.C())&63)))
		case SAR:
			r.setI(ins.A(), r.i(ins.B())>>(r.i(ins.C())&63))
		case ADDI:
			r.setI(ins.A(), r.i(ins.B())+int64(ins.D()))
		case SUBI:
			r.setI(ins.A(), r.i(ins.B())-int64(ins.D()))
		case MULI:
			r.setI(ins.A(), r.i(ins.B())*int64(ins.D()))
		case ANDI:
			r.setI(ins.A(), r.i(ins.B())&int64(ins.D()))
		case SHLI:
			r.setI(ins.A(), r.i(ins.B())<<(ins.D()&63))
		case SHRI:
			r.setI(ins.A(), int64(uint64(r.i(ins.B()))>>(ins.D()&63)))
		case SARI:
			r.setI(ins.A(), r.i(ins.B())>>(ins.D()&63))

		// i64 comparisons
		case EQ:
			r.setI(ins.A(), b2i(r.i(ins.B()) == r.i(ins.C())))
		case NE:
			r.setI(ins.A(), b2i(r.i(ins.B()) != r.i(ins.C())))
		case LT:
			r.setI(ins.A(), b2i(r.i(ins.B()) < r.i(ins.C())))
		case LE:
			r.setI(ins.A(), b2i(r.i(ins.B()) <= r.i(ins.C())))
		case GT:
			r.setI(ins.A(), b2i(r.i(ins.B()) > r.i(ins.C())))
		case GE:
			r.setI(ins.A(), b2i(r.i(ins.B()) >= r.i(ins.C())))

		// f64
		case FADD:
			r.setF(ins.A(), r.f(ins.B())+r.f(ins.C()))
		case FSUB:
			r.setF(ins.A(), r.f(ins.B())-r.f(ins.C()))
		case FMUL:
			r.setF(ins.A(), r.f(ins.B())*r.f(ins.C()))
		case FDIV:
			r.setF(ins.A(), r.f(ins.B())/r.f(ins.C()))
		case FNEG:
			r.setF(ins.A(), -r.f(ins.B()))
		case FSQRT:
			r.setF(ins.A(), math.Sqrt(r.f(ins.B())))
		case FLT:
			r.setI(ins.A(), b2i(r.f(ins.B()) < r.f(ins.C())))
		case FLE:
			r.setI(ins.A(), b2i(r.f(ins.B()) <= r.f(ins.C())))
		case FEQ:
			r.setI(ins.A(), b2i(r.f(ins.B()) == r.f(ins.C())))
		case ITOF:
			r.setF(ins.A(), float64(r.i(ins.B())))
		case FTOI:
			r.setI(ins.A(), ftoi(r.f(ins.B())))

		// branches
		case JMP:
			goto taken
		case JZ:
			if r.i(ins.A()) == 0 {
				goto taken
			}
		case JNZ:
			if r.i(ins.A()) != 0 {
				goto taken
			}
		case JEQ:
			if r.i(ins.A()) == r.i(ins.B()) {
				goto taken
			}
		case JNE:
			if r.i(ins.A()) != r.i(ins.B()) {
				goto taken
			}
		case JLT:
			if r.i(ins.A()) < r.i(ins.B()) {
				goto taken
			}
		case JLE:
			if r.i(ins.A()) <= r.i(ins.B()) {
				goto taken
			}
		case JGT:
			if r.i(ins.A()) > r.i(ins.B()) {
				goto taken
			}
		case JGE:
			if r.i(ins.A()) >= r.i(ins.B()) {
				goto taken
			}
		case JEQI:
			if r.i(ins.A()) == int64(ins.BC()) {
				goto taken
			}
		case JNEI:
			if r.i(ins.A()) != int64(ins.BC()) {
				goto taken
			}
		case JLTI:
			if r.i(ins.A()) < int64(ins.BC()) {
				goto taken
			}
		case JLEI:
			if r.i(ins.A()) <= int64(ins.BC()) {
				goto taken
			}
		case JGTI:
			if r.i(ins.A()) > int64(ins.BC()) {
				goto taken
			}
		case JGEI:
			if r.i(ins.A()) >= int64(ins.BC()) {
				goto taken
			}

		// calls (the slow path traps at the depth limit and grows the
		// frame and register stacks)
		case CALL:
			fp := e.fp + 1
			base := e.frames[fp-1].base + int(ins.A())
			if fp >= len(e.frames) || fp >= int(e.maxFrames) || base+headroom(e.prog.Funcs[ins.D()].NRegs) > len(e.regs) {
				goto slow
			}
			e.frames[fp-1].pc = pc
			e.frames[fp] = frame{fn: int(ins.D()), base: base}
			e.fp = fp
			f := &e.prog.Funcs[ins.D()]
			code = f.Code
			pc = 0
			r = e.view(base, f.NRegs)
			r.enter(len(f.Params))
			if left <= 0 || e.stop.Load() {
				goto preempt
			}
		case RET, RETV:
			fp := e.fp
			if fp == 0 {
				goto slow // the entry function returns: finish
			}
			from := 0
			if ins.Op() == RET {
				var t Type
				if jadecheck {
					t = e.prog.Funcs[e.frames[fp].fn].Result
				}
				r.set(0, r.get(ins.A(), t), t) // the callee's r0 is the caller's window register
				from = 1
			}
			fp--
			e.fp = fp
			cur = &e.frames[fp]
			f := &e.prog.Funcs[cur.fn]
			if jadecheck {
				e.clobberAbs(e.frames[fp+1].base+from, cur.base+f.NRegs)
			}
			code = f.Code
			pc = cur.pc
			r = e.view(cur.base, f.NRegs)
			if left <= 0 || e.stop.Load() {
				goto preempt
			}
		case TAILCALL:
			if need := e.frames[e.fp].base + headroom(e.prog.Funcs[ins.D()].NRegs); need > len(e.regs) {
				// Cold: the new function needs a bigger frame.
				e.growRegs(need, true)
				r = e.view(e.frames[e.fp].base, e.prog.Funcs[e.frames[e.fp].fn].NRegs)
			}
			a, c := ins.A(), ins.C()
			for i := uint8(0); i < c; i++ {
				r.move(i, a+i)
			}
			cur = &e.frames[e.fp]
			cur.fn = int(ins.D())
			f := &e.prog.Funcs[cur.fn]
			code = f.Code
			pc = 0
			r = e.view(cur.base, f.NRegs)
			r.enter(int(c))
			if left <= 0 || e.stop.Load() {
				goto preempt
			}

		// fast paths of handle reads and writes (a bad handle or index
		// goes to the slow path, which traps)
		case SLEN:
			o := e.heap.get(r.ref(ins.B()), KindString)
			if o == nil {
				goto slow
			}
			r.setI(ins.A(), int64(o.n))
		case BLEN:
			o := e.heap.get(r.ref(ins.B()), KindBytes)
			if o == nil {
				goto slow
			}
			r.setI(ins.A(), int64(o.n))
		case BGET:
			o := e.heap.get(r.ref(ins.B()), KindBytes)
			if o == nil {
				goto slow
			}
			i := r.i(ins.C())
			if uint64(i) >= uint64(o.n) {
				goto slow
			}
			r.setI(ins.A(), int64(*(*byte)(unsafe.Add(o.p, i))))
		case BSET:
			o := e.heap.get(r.ref(ins.A()), KindBytes)
			if o == nil {
				goto slow
			}
			i := r.i(ins.B())
			if uint64(i) >= uint64(o.n) {
				goto slow
			}
			*(*byte)(unsafe.Add(o.p, i)) = byte(r.i(ins.C()))
		case ALEN:
			o := e.heap.getArray(r.ref(ins.B()))
			if o == nil {
				goto slow
			}
			r.setI(ins.A(), int64(o.n))
		case AGETI, AGETF, AGETR:
			k := KindArrayI64 + Kind(ins.Op()-AGETI)
			o := e.heap.get(r.ref(ins.B()), k)
			if o == nil {
				goto slow
			}
			i := r.i(ins.C())
			if uint64(i) >= uint64(o.n) {
				goto slow
			}
			r.set(ins.A(), *(*uint64)(unsafe.Add(o.p, 8*i)), elemType[k-KindArrayI64])
		case ASETI, ASETF:
			k := KindArrayI64 + Kind(ins.Op()-ASETI)
			o := e.heap.get(r.ref(ins.A()), k)
			if o == nil {
				goto slow
			}
			i := r.i(ins.B())
			if uint64(i) >= uint64(o.n) {
				goto slow
			}
			*(*uint64)(unsafe.Add(o.p, 8*i)) = r.get(ins.C(), elemType[k-KindArrayI64])

		default:
			// NEWERR THROW ERRMSG ERRKIND SCONCAT SEQ ITOS STOB BTOS BNEW
			// BCOPY BSLICE BFIND BEQ ANEW ASETR, the intrinsics, FREE
			goto slow
		}
		continue

	taken: // a taken branch; a backward one is a safe point
		if t := int(ins.D()); t < pc {
			pc = t
			if left <= 0 || e.stop.Load() {
				goto preempt
			}
		} else {
			pc = t
		}
	}

slow: // run ins out of line; nothing computed above survives the call
	e.frames[e.fp].pc = pc
	e.left = left
	if c := e.step(ins); c >= ctlExit {
		e.reductions += uint64(budget - e.left)
		return Signal(c - ctlExit)
	} else {
		cur = &e.frames[e.fp]
		f := &e.prog.Funcs[cur.fn]
		code = f.Code
		pc = cur.pc
		r = e.view(cur.base, f.NRegs)
		left = e.left
		if c == ctlSafePoint && (left <= 0 || e.stop.Load()) {
			goto preempt
		}
	}
	goto run

preempt:
	e.frames[e.fp].pc = pc
	e.left = left
	e.reductions += uint64(budget - left)
	return SigPreempted
}
