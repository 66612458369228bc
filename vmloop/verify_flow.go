package vmloop

// vfFlow is the state of the flow-typing fixpoint of one function.
type vfFlow struct {
	v         *verifier
	fi        int
	f         *Function
	handlerAt []int32 // pc -> catching handler or -1; nil without handlers
	starts    []int32 // region index -> first pc
	regionAt  []int32 // leader pc -> region index (other pcs: garbage)
	stride    int     // words per state
	in        []uint64
	reached   vfBits
	dirty     vfBits
	edge      vfState // scratch state of an exception edge
	cur       vfState // the state of the region being visited
}

// vfReuse returns buf resized to n zero elements, in buf's array when it is
// large enough (the verifier's scratch, reused from function to function).
func vfReuse[T any](buf []T, n int) []T {
	if cap(buf) < n {
		return make([]T, n)
	}
	buf = buf[:n]
	clear(buf)
	return buf
}

func (fl *vfFlow) state(b int32) vfState {
	return fl.in[int(b)*fl.stride : (int(b)+1)*fl.stride]
}

// merge joins s into the in-state of the region starting at leader pc.
func (fl *vfFlow) merge(pc int, s vfState) {
	b := fl.regionAt[pc]
	if !fl.reached.has(int(b)) {
		copy(fl.state(b), s)
		fl.reached.set(int(b))
		fl.dirty.set(int(b))
	} else if fl.state(b).union(s) {
		fl.dirty.set(int(b))
	}
}

// flow runs the flow-typing fixpoint over the regions of function fi.
func (v *verifier) flow(fi int, lead vfBits, handlerAt []int32) error {
	f := &v.p.Funcs[fi]
	n := len(f.Code)
	nr := vfCount(lead, n)
	stride := vkCount * vfStateWords(f.NRegs)
	if need := nr * stride * 8; need > vfStateBudget(n) {
		return v.funcErr(fi, -1, "function too large to verify: its %d regions in a frame of %d registers need %d bytes of register-type state, more than %d (16 times its %d bytes of code, plus 1 MiB); use fewer registers or fewer branch targets, or split it into smaller functions",
			nr, f.NRegs, need, vfStateBudget(n), 8*n)
	}
	// The scratch of the previous function is reused: a program of many
	// small functions would otherwise leave a few hundred bytes of garbage
	// per function, and the collector would let the heap grow to twice
	// the program before reclaiming it.
	fl := &v.scratch
	*fl = vfFlow{
		v: v, fi: fi, f: f, handlerAt: handlerAt,
		starts:   vfReuse(fl.starts, nr+1)[:0],
		regionAt: vfReuse(fl.regionAt, n+1),
		stride:   stride,
		reached:  vfReuse(fl.reached, (nr+63)/64),
		dirty:    vfReuse(fl.dirty, (nr+63)/64),
		in:       vfReuse(fl.in, nr*stride),
		edge:     vfReuse(fl.edge, stride),
		cur:      vfReuse(fl.cur, stride),
	}
	for pc := lead.nextFrom(0); pc >= 0 && pc < n; pc = lead.nextFrom(pc + 1) {
		fl.regionAt[pc] = int32(len(fl.starts))
		fl.starts = append(fl.starts, int32(pc))
	}
	fl.starts = append(fl.starts, int32(n))
	st := fl.cur

	entry := fl.state(0)
	nw := fl.stride / vkCount
	for w := range nw {
		entry[vkUndef*nw+w] = ^uint64(0)
	}
	for r, t := range f.Params {
		entry.set(uint8(r), vkOf(t))
	}
	fl.reached.set(0)
	fl.dirty.set(0)

	// Visit dirty regions in pc order, wrapping around: forward dataflow
	// converges in about (loop nesting depth + 2) sweeps on structured
	// code. Each region's state can grow at most 4*NRegs times, so the
	// work is bounded anyway, but adversarial control flow (long chains of
	// overlapping loops) can approach that bound; the budget keeps a hostile
	// function from holding the loader for seconds.
	budget := vfBudget(n)
	cursor := 0
	for {
		b := fl.dirty.nextFrom(cursor)
		if b < 0 {
			if b = fl.dirty.nextFrom(0); b < 0 {
				break
			}
		}
		fl.dirty.clear(b)
		cursor = b + 1
		copy(st, fl.state(int32(b)))
		start, end := int(fl.starts[b]), int(fl.starts[b+1])
		if budget -= end - start; budget < 0 {
			return v.funcErr(fi, -1, "function too complex to verify: register types did not settle within %d instruction visits (%d instructions); split it into smaller functions or simplify its control flow", vfBudget(n), n)
		}
		if v.visitsLeft -= end - start; v.visitsLeft < 0 {
			return v.funcErr(fi, -1, "program too complex to verify: the register types of its functions did not settle within %d instruction visits in all (%d instructions in %s; structured code needs a few visits per instruction), and the budget ran out in this function; simplify the control flow of its functions with tangled loops",
				vfBudget(v.codeLen), v.codeLen, vfPlural(len(v.p.Funcs), "function"))
		}
		for pc := start; pc < end; pc++ {
			if err := fl.step(pc, st); err != nil {
				return err
			}
		}
		ins := f.Code[end-1]
		info, _ := ins.Op().Info()
		if info.Flags&FlagBranch != 0 {
			fl.merge(int(ins.D()), st)
		}
		if info.Flags&(FlagJump|FlagTerminator) == 0 {
			fl.merge(end, st)
		}
	}
	return nil
}

// vfBudget is the number of instruction visits the fixpoint may make for a
// function of n instructions, and the fixpoints of all the functions of a
// program of n instructions together (verifier.visitsLeft). It is never
// reached by a function of up to 4096 instructions (whose worst case is
// about 1025*n visits) nor by structured code, which needs about
// (loop depth + 2)*n. The program's budget lets a program of many
// functions that each approach their own be refused instead of taking
// their number times as long (a hundred took 9 s).
func vfBudget(n int) int { return 16*n + 1<<22 }

// vfStateBudget is the most bytes the flow fixpoint of a function of n
// instructions may hold in region states: 16 times its code, plus 1 MiB.
// A state costs 8*vkCount bytes per 64 registers of the frame, so only a
// function with a frame of over 192 registers and a branch target every
// instruction or two can reach it.
func vfStateBudget(n int) int { return 16*8*n + 1<<20 }

// readErr reports a read of register r as kind k that does not type-check.
func (fl *vfFlow) readErr(pc int, r uint8, k int, m uint8) error {
	m = vfFoldRefs(m)
	ins := fl.f.Code[pc]
	op := ins.Op()
	switch op {
	case CALL, TAILCALL, SPAWN, INTR:
		i := int(r) - int(ins.A())
		if op == INTR {
			in := fl.v.imports[ins.D()]
			return fl.v.funcErr(fl.fi, pc, "intr %s, argument %d: %s", in.Name, i, vfReadReason(vfRegName(fl.f, r), k, m))
		}
		callee := QuoteName(fl.v.p.Funcs[ins.D()].Name)
		return fl.v.funcErr(fl.fi, pc, "%s to %s, argument %d: %s", op, callee, i, vfReadReason(vfRegName(fl.f, r), k, m))
	}
	return fl.v.funcErr(fl.fi, pc, "%s: %s", op, vfReadReason(vfRegName(fl.f, r), k, m))
}

// window type-checks the argument window a..a+len(params)-1.
func (fl *vfFlow) window(pc int, st vfState, a uint8, params []Type) error {
	for i, t := range params {
		r := a + uint8(i)
		if m, k := st.mask(r), vkOf(t); !vfReads(m, k) {
			return fl.readErr(pc, r, k, m)
		}
	}
	return nil
}

// step applies the instruction at pc to st: its exception edge, its reads
// (which must type-check) and its writes.
func (fl *vfFlow) step(pc int, st vfState) error {
	p := fl.v.p
	ins := fl.f.Code[pc]
	op := ins.Op()
	a := ins.A()

	if fl.handlerAt != nil && opTable[op].Flags&FlagMayThrow != 0 && fl.handlerAt[pc] >= 0 {
		h := fl.f.Handlers[fl.handlerAt[pc]]
		copy(fl.edge, st)
		if op == CALL || op == TAILCALL {
			fl.edge.clobberFrom(int(a))
		}
		fl.edge.set(h.Reg, vkRef)
		fl.merge(int(h.Target), fl.edge)
	}

	switch op {
	case CALL, TAILCALL, SPAWN:
		callee := &p.Funcs[ins.D()]
		if err := fl.window(pc, st, a, callee.Params); err != nil {
			return err
		}
		switch op {
		case CALL:
			st.clobberFrom(int(a) + 1)
			if callee.Result != TVoid {
				st.set(a, vkOf(callee.Result))
			} else if int(a) < fl.f.NRegs { // a void call's base may lie just past the frame
				st.set(a, vkClob)
			}
		case SPAWN:
			if ins.B() != SpawnDetached {
				st.set(a, vkRef)
			}
		}
		return nil
	case INTR:
		in := fl.v.imports[ins.D()]
		if err := fl.window(pc, st, a, in.Params); err != nil {
			return err
		}
		if err := fl.intrKinds(pc, st, a, in); err != nil {
			return err
		}
		if in.Result != TVoid {
			st.set(a, vkOf(in.Result))
		}
		return nil
	case RET:
		if m, k := st.mask(a), vkOf(fl.f.Result); !vfReads(m, k) {
			return fl.readErr(pc, a, k, m)
		}
		return nil
	}
	sem := &vfSems[op]
	for i := range sem.nreads {
		o := sem.reads[i]
		r := vfReg(ins, o.field)
		m := st.mask(r)
		if !vfReads(m, int(o.kind)) {
			return fl.readErr(pc, r, int(o.kind), m)
		}
		if o.obj != 0 && m&(1<<o.obj|1<<vkRef) == 0 {
			return fl.kindErr(pc, r, int(o.obj), m)
		}
	}
	if op == MOVR { // the copy keeps what is known of the object's kind
		st.setMask(a, st.mask(ins.B()))
		return nil
	}
	for i := range sem.nwrites {
		w := sem.writes[i]
		k := int(w.kind)
		if w.obj != 0 {
			k = int(w.obj)
		}
		st.set(vfReg(ins, w.field), k)
	}
	return nil
}
