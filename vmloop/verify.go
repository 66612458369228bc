package vmloop

import (
	"fmt"
	"strconv"
	"strings"
)

// The bytecode verifier (docs/ISA.md: types, windows, exceptions, limits).
//
// Verify runs, per function:
//
//  1. header checks: parameter and result types, 0 <= len(Params) <= NRegs
//     <= MaxRegs, non-empty code;
//  2. the .try table: ranges inside the code, targets outside their own
//     range, error registers inside the frame, ranges disjoint or nested with
//     inner ranges listed first;
//  3. a static pass over every instruction, reachable or not: defined
//     opcode, registers inside the frame, branch targets, pool, function and
//     import indices, argument windows, arities, element types, ret/retv
//     against the result type, tailcall result types; the last instruction
//     must not fall through;
//  4. flow typing: a worklist fixpoint over the dataflow regions,
//     exception edges included, that proves every read register holds
//     exactly the type the instruction reads (so refs are definitely
//     assigned and never forged);
//  5. basic blocks (Function.Blocks) with their cost and safe-point flag.
//
// The fixpoint keeps one bit set per region, sized by the frame (40 bytes
// for up to 64 registers), and visits regions in pc order; structured code
// settles in (loop depth + 2) sweeps. A visit budget (vfBudget) rejects the
// rare huge function with pathological control flow instead of spending
// seconds on it; functions of up to 4096 instructions can never reach it.

// VerifyError is a rejection by Verify: where the problem is and what is
// wrong. File, Line and Col come from the program's debug information
// (empty and 0 when it has none); Error prints them first, as file:line or
// file:line:col.
type VerifyError struct {
	File   string // source file (Program.File); "" if unknown
	Line   int    // source line of the instruction (Function.Lines); 0 if unknown
	Col    int    // source column, known only for an unused import (Import.Col); 0 if unknown
	Func   string // function name; "" for program-level problems
	PC     int    // instruction index; -1 for function-level problems
	Reason string
}

func (e *VerifyError) Error() string {
	s := "vmloop: verify: " + vfPosition(e.File, e.Line, e.Col)
	if e.Func == "" {
		return s + e.Reason
	}
	return s + e.Func + "@" + strconv.Itoa(e.PC) + ": " + e.Reason
}

// Verify checks p against every rule of the verifier and, on success,
// resolves its intrinsic imports, fills Function.Blocks and marks p verified.
// r resolves host intrinsics that are not in the central table; it may be
// nil. On failure p stays unverified and the error is a *VerifyError.
//
// Verify never panics on any input (a verifier bug, or a panicking
// Resolver, becomes an "internal verifier error" rejection). It writes to p
// (Blocks, Resolved, the verified flag), so it must not run while p is in
// use elsewhere.
func Verify(p *Program, r Resolver) (err error) {
	defer func() {
		if x := recover(); x != nil {
			if p != nil {
				p.verified = false
			}
			err = &VerifyError{PC: -1, Reason: fmt.Sprintf("internal verifier error: %v (please report this program)", x)}
		}
	}()
	return vfVerify(p, r)
}

// vfVerify is Verify without the panic safety net (the fuzz test calls it
// so that a verifier bug shows up as a crash).
func vfVerify(p *Program, r Resolver) error {
	if p == nil {
		return &VerifyError{PC: -1, Reason: "nil program"}
	}
	p.verified = false
	v := &verifier{p: p}
	if err := v.checkProgram(r); err != nil {
		return err
	}
	for i := range p.Funcs {
		if err := v.checkHeader(i); err != nil {
			return err
		}
	}
	blocks := make([][]Block, len(p.Funcs))
	for i := range p.Funcs {
		b, err := v.checkFunc(i)
		if err != nil {
			return err
		}
		blocks[i] = b
	}
	for i := range p.Funcs {
		p.Funcs[i].Blocks = blocks[i]
		p.Funcs[i].handlerAt = v.handlerAt[i]
	}
	for i := range p.Intrinsics {
		p.Intrinsics[i].Resolved = v.imports[i]
	}
	for i := range p.Funcs {
		p.Funcs[i].straight = isStraight(&p.Funcs[i])
	}
	p.verified = true
	return nil
}

type verifier struct {
	p *Program
	// handlerAt[fi] is checkHandlers' table of function fi, kept as
	// Function.handlerAt when the program is accepted.
	handlerAt [][]int32
	imports   []*Intrinsic // resolved p.Intrinsics
}

func (v *verifier) progErr(format string, args ...any) error {
	return &VerifyError{File: v.p.File, PC: -1, Reason: fmt.Sprintf(format, args...)}
}

func (v *verifier) funcErr(fi, pc int, format string, args ...any) error {
	f := &v.p.Funcs[fi]
	return &VerifyError{File: v.p.File, Line: f.Line(pc), Func: f.Name, PC: pc, Reason: fmt.Sprintf(format, args...)}
}

// vfVersionLess reports a < b in (major, minor) order.
func vfVersionLess(a, b Version) bool {
	return a.Major < b.Major || a.Major == b.Major && a.Minor < b.Minor
}

func vfValueType(t Type) bool { return t == TI64 || t == TF64 || t == TRef }

func vfResultType(t Type) bool { return t == TVoid || vfValueType(t) }

// checkProgram runs the program-level checks and resolves the imports.
func (v *verifier) checkProgram(r Resolver) error {
	p := v.p
	if len(p.Funcs) == 0 {
		return v.progErr("program has no functions; define at least one .func")
	}
	if err := CheckABI(p.ABI); err != nil {
		return &VerifyError{File: p.File, Line: max(int(p.ABILine), 0), PC: -1, Reason: strings.TrimPrefix(err.Error(), "vmloop: ")}
	}
	names := make(map[string]int, len(p.Funcs))
	for i := range p.Funcs {
		name := p.Funcs[i].Name
		if name == "" {
			return v.progErr("function %d has no name; every function needs a unique name", i)
		}
		if j, dup := names[name]; dup {
			return v.progErr("functions %d and %d are both named %q; function names must be unique", j, i, name)
		}
		names[name] = i
	}
	v.imports = make([]*Intrinsic, len(p.Intrinsics))
	for i, imp := range p.Intrinsics {
		in, ok := LookupIntrinsic(imp.Name)
		if !ok && r != nil {
			in, ok = r.ResolveIntrinsic(imp.Name)
		}
		if !ok || in == nil {
			return v.importErr(i, "import %d %q: unknown intrinsic (not in the central table of ABI %s and not registered by the host); check the name or register a host intrinsic", i, imp.Name, ABI)
		}
		for j, t := range in.Params {
			if !vfValueType(t) {
				return v.progErr("import %d %q: parameter %d has type %s; intrinsic parameters must be i64, f64 or ref (fix the host registration)", i, imp.Name, j, t)
			}
		}
		if !vfResultType(in.Result) {
			return v.progErr("import %d %q: result type %s is not void, i64, f64 or ref (fix the host registration)", i, imp.Name, in.Result)
		}
		if vfVersionLess(p.ABI, in.Since) {
			return v.importErr(i, "import %d %q needs intrinsic ABI %s but the program declares .abi %s; raise the program's .abi to %s", i, imp.Name, in.Since, p.ABI, in.Since)
		}
		v.imports[i] = in
	}
	return nil
}

// checkHeader checks a function's signature and frame size.
func (v *verifier) checkHeader(fi int) error {
	f := &v.p.Funcs[fi]
	for i, t := range f.Params {
		if !vfValueType(t) {
			return v.funcErr(fi, -1, "parameter %d has type %s; parameters must be i64, f64 or ref", i, t)
		}
	}
	if !vfResultType(f.Result) {
		return v.funcErr(fi, -1, "result type %s is not void, i64, f64 or ref", f.Result)
	}
	if f.NRegs < 0 || f.NRegs > MaxRegs {
		return v.funcErr(fi, -1, "frame has %d registers; it must have 0 to %d (use fewer locals)", f.NRegs, MaxRegs)
	}
	if f.NRegs < len(f.Params) {
		return v.funcErr(fi, -1, "frame has %d registers but %d parameters; parameters occupy the first registers, so NRegs must be at least %d", f.NRegs, len(f.Params), len(f.Params))
	}
	return nil
}

// checkFunc verifies one function and returns its basic blocks.
func (v *verifier) checkFunc(fi int) ([]Block, error) {
	f := &v.p.Funcs[fi]
	if len(f.Code) == 0 {
		return nil, v.funcErr(fi, -1, "function has no code; end it with ret, retv, jmp, throw or tailcall")
	}
	handlerAt, err := v.checkHandlers(fi)
	if err != nil {
		return nil, err
	}
	if v.handlerAt == nil {
		v.handlerAt = make([][]int32, len(v.p.Funcs))
	}
	v.handlerAt[fi] = handlerAt
	for pc := range f.Code {
		if err := v.checkInstr(fi, pc); err != nil {
			return nil, err
		}
	}
	last := len(f.Code) - 1
	if info, _ := f.Code[last].Op().Info(); info.Flags&(FlagJump|FlagTerminator) == 0 {
		return nil, v.funcErr(fi, last, "execution falls off the end of the function after %s; end it with ret, retv, jmp, throw or tailcall", info.Name)
	}
	blockLead, regionLead := vfLeaders(f)
	if err := v.flow(fi, regionLead, handlerAt); err != nil {
		return nil, err
	}
	if v.usesTypedChan(fi) {
		if err := v.checkChanElems(fi, regionLead, handlerAt); err != nil {
			return nil, err
		}
	}
	return buildBlocks(f, blockLead), nil
}

func vfPlural(n int, word string) string {
	switch {
	case n == 1:
		return "1 " + word
	case strings.HasSuffix(word, "y"):
		return strconv.Itoa(n) + " " + word[:len(word)-1] + "ies"
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// vfReg returns the register operand in field fl.
func vfReg(ins Instr, fl Field) uint8 {
	switch fl {
	case FA:
		return ins.A()
	case FB:
		return ins.B()
	case FC:
		return ins.C()
	case FD0:
		return ins.D0()
	case FD1:
		return ins.D1()
	}
	return 0
}

// checkInstr runs the flow-independent checks of the instruction at pc.
func (v *verifier) checkInstr(fi, pc int) error {
	p := v.p
	f := &p.Funcs[fi]
	ins := f.Code[pc]
	op := ins.Op()
	info, ok := op.Info()
	if !ok {
		return v.funcErr(fi, pc, "undefined opcode %d (this VM defines opcodes 0..%d); the program is corrupt or built for a newer ISA", uint8(op), NumOps-1)
	}
	name := info.Name
	d := int(ins.D())
	for _, o := range info.Operands {
		switch o.Kind {
		case ODst, OSrc, OSrcDst:
			if r := vfReg(ins, o.Field); int(r) >= f.NRegs {
				return v.funcErr(fi, pc, "%s: register r%d outside the frame of %d registers %s", name, r, f.NRegs, vfRegRange(f.NRegs))
			}
		case OTarget:
			if d < 0 || d >= len(f.Code) {
				return v.funcErr(fi, pc, "%s: branch target %d outside function (len %d)", name, d, len(f.Code))
			}
		case OConstI:
			if d < 0 || d >= len(p.KInt) {
				return v.funcErr(fi, pc, "%s: constant index %d outside the i64 constant pool (%s)", name, d, vfPlural(len(p.KInt), "entry"))
			}
		case OConstF:
			if d < 0 || d >= len(p.KFlt) {
				return v.funcErr(fi, pc, "%s: constant index %d outside the f64 constant pool (%s)", name, d, vfPlural(len(p.KFlt), "entry"))
			}
		case OConstS:
			if d < 0 || d >= len(p.KStr) {
				return v.funcErr(fi, pc, "%s: constant index %d outside the string constant pool (%s)", name, d, vfPlural(len(p.KStr), "entry"))
			}
		case OConstB:
			if d < 0 || d >= len(p.KBytes) {
				return v.funcErr(fi, pc, "%s: constant index %d outside the bytes constant pool (%s)", name, d, vfPlural(len(p.KBytes), "entry"))
			}
		case OFunc:
			if d < 0 || d >= len(p.Funcs) {
				return v.funcErr(fi, pc, "%s: function index %d out of range (the program has %s)", name, d, vfPlural(len(p.Funcs), "function"))
			}
		case OIntr:
			if d < 0 || d >= len(p.Intrinsics) {
				return v.funcErr(fi, pc, "%s: import index %d out of range (the program imports %s)", name, d, vfPlural(len(p.Intrinsics), "intrinsic"))
			}
		case OWindow:
			if a, c := int(ins.A()), int(ins.C()); a+c > f.NRegs {
				return v.funcErr(fi, pc, "%s: argument window r%d..r%d (%s) exceeds the frame of %d registers %s", name, a, a+c-1, vfPlural(c, "argument"), f.NRegs, vfRegRange(f.NRegs))
			}
		case OElemType:
			if t := Type(ins.C()); !vfValueType(t) {
				return v.funcErr(fi, pc, "%s: element type %s; arrays hold i64, f64 or ref", name, t)
			}
		}
	}
	a, c := int(ins.A()), int(ins.C())
	switch op {
	case CALL, TAILCALL, SPAWN:
		callee := &p.Funcs[d]
		if c != len(callee.Params) {
			return v.funcErr(fi, pc, "%s to %s passes %s, %s takes %d", name, callee.Name, vfPlural(c, "argument"), callee.Name, len(callee.Params))
		}
		if (op == SPAWN || op == CALL && callee.Result != TVoid) && a >= f.NRegs {
			return v.funcErr(fi, pc, "%s to %s: result register r%d outside the frame of %d registers %s", name, callee.Name, a, f.NRegs, vfRegRange(f.NRegs))
		}
		if op == TAILCALL && callee.Result != f.Result {
			return v.funcErr(fi, pc, "tailcall to %s, which returns %s, from %s, which returns %s; a tailcall needs the same result type (use call and ret instead)", callee.Name, callee.Result, f.Name, f.Result)
		}
	case INTR:
		in := v.imports[d]
		if !in.IntrOK {
			if in.Builtin != NOP {
				return v.funcErr(fi, pc, "intr: %s cannot be called through intr; use the %s instruction", in.Name, in.Builtin)
			}
			return v.funcErr(fi, pc, "intr: %s cannot be called through intr", in.Name)
		}
		if c != len(in.Params) {
			return v.funcErr(fi, pc, "intr %s passes %s, %s takes %d", in.Name, vfPlural(c, "argument"), in.Name, len(in.Params))
		}
		if in.Result != TVoid && a >= f.NRegs {
			return v.funcErr(fi, pc, "intr %s: result register r%d outside the frame of %d registers %s", in.Name, a, f.NRegs, vfRegRange(f.NRegs))
		}
	case RET:
		if f.Result == TVoid {
			return v.funcErr(fi, pc, "ret in a void function; use retv")
		}
	case RETV:
		if f.Result != TVoid {
			return v.funcErr(fi, pc, "retv in a function returning %s; return a value with ret (or make the function void)", f.Result)
		}
	}
	if since, ok := opSince[op]; ok && vfVersionLess(p.ABI, since) {
		return v.funcErr(fi, pc, "%s needs ABI %s but the program declares .abi %s; raise the program's .abi to %s", name, since, p.ABI, since)
	}
	if in := BuiltinIntrinsic(op); in != nil && vfVersionLess(p.ABI, in.Since) {
		return v.funcErr(fi, pc, "%s needs intrinsic ABI %s but the program declares .abi %s; raise the program's .abi", name, in.Since, p.ABI)
	}
	return nil
}

// vfSem is the register effect of a plain opcode, precomputed from the ISA
// table: the registers it reads (with their kinds) and the one it writes.
// CALL, TAILCALL, SPAWN, INTR and RET are handled separately.
type vfSem struct {
	nreads  uint8
	reads   [5]vfOperand
	nwrites uint8 // in assembly order: btoi and stoi write two
	writes  [2]vfOperand
}

type vfOperand struct {
	field Field
	kind  uint8
	// obj is the object kind a ref operand needs or makes (vkStr,
	// vkBytes; verify_kind.go), or 0 for any.
	obj uint8
}

var vfSems = func() (s [NumOps]vfSem) {
	for op := range NumOps {
		info, ok := Op(op).Info()
		if !ok {
			continue
		}
		for _, o := range info.Operands {
			if (o.Kind == OSrc || o.Kind == OSrcDst) && vfValueType(o.Type) && int(s[op].nreads) < len(s[op].reads) {
				s[op].reads[s[op].nreads] = vfOperand{o.Field, uint8(vkOf(o.Type)), vfObjKind(Op(op), o.Field)}
				s[op].nreads++
			}
			if (o.Kind == ODst || o.Kind == OSrcDst) && vfValueType(o.Type) && int(s[op].nwrites) < len(s[op].writes) {
				s[op].writes[s[op].nwrites] = vfOperand{o.Field, uint8(vkOf(o.Type)), vfObjKind(Op(op), o.Field)}
				s[op].nwrites++
			}
		}
	}
	return s
}()

// vfReadReason explains why register r, holding the kinds in mask m, cannot
// be read as kind want.
func vfReadReason(r string, want int, m uint8) string {
	some := ""
	if m&(m-1) != 0 {
		some = " on some path"
	}
	for k := vkI64; k <= vkRef; k++ {
		if k != want && m&(1<<k) != 0 {
			return fmt.Sprintf("%s is read as %s but holds %s%s", r, vkNames[want], vkNames[k], some)
		}
	}
	if m&(1<<vkClob) != 0 {
		return fmt.Sprintf("%s is read as %s but was clobbered by a call%s (a call leaves every register above its window base undefined; keep live values below the window or write them again)", r, vkNames[want], some)
	}
	return fmt.Sprintf("%s is read as %s before it is written%s; write it on every path before reading it", r, vkNames[want], some)
}

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
	fl := &vfFlow{
		v: v, fi: fi, f: f, handlerAt: handlerAt,
		starts:   make([]int32, 0, nr+1),
		regionAt: make([]int32, n+1),
		stride:   vkCount * vfStateWords(f.NRegs),
		reached:  newVfBits(nr),
		dirty:    newVfBits(nr),
	}
	for pc := lead.nextFrom(0); pc >= 0 && pc < n; pc = lead.nextFrom(pc + 1) {
		fl.regionAt[pc] = int32(len(fl.starts))
		fl.starts = append(fl.starts, int32(pc))
	}
	fl.starts = append(fl.starts, int32(n))
	fl.in = make([]uint64, nr*fl.stride)
	fl.edge = make(vfState, fl.stride)
	st := make(vfState, fl.stride)

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
// function of n instructions. It is never reached by a function of up to
// 4096 instructions (whose worst case is about 1025*n visits) nor by
// structured code, which needs about (loop depth + 2)*n.
func vfBudget(n int) int { return 64*n + 1<<22 }

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
		callee := fl.v.p.Funcs[ins.D()].Name
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
			st.set(a, vkRef)
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

// isStraight reports whether a verified function has no handler (one may
// lie before its range: a caught throw loops back), no backward branch and
// no call (Function.straight).
func isStraight(f *Function) bool {
	if len(f.Handlers) > 0 {
		return false
	}
	for pc, ins := range f.Code {
		switch op := ins.Op(); op {
		case CALL, TAILCALL:
			return false
		default:
			if info, ok := op.Info(); ok && info.Flags&FlagBranch != 0 && int(ins.D()) <= pc {
				return false
			}
		}
	}
	return true
}
