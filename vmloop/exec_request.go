package vmloop

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
