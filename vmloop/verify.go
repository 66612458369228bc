package vmloop

import (
	"fmt"
	"slices"
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
// The program as a whole has the same budget for all its instructions
// (vfBudget of their sum: 16 visits per instruction plus 4M), so many
// tangled functions cannot add up to their number times a function's
// budget: a program whose functions need more in all is refused as too
// complex. The region states are bounded too (vfStateBudget), so
// verification never holds more than a small multiple of the code.

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
	return s + QuoteName(e.Func) + "@" + strconv.Itoa(e.PC) + ": " + e.Reason
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
	for i := range p.Funcs {
		v.codeLen += len(p.Funcs[i].Code)
	}
	v.visitsLeft = vfBudget(v.codeLen)
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
		p.Funcs[i].refParams = slices.Contains(p.Funcs[i].Params, TRef)
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
	// codeLen is the number of instructions of the whole program, and
	// visitsLeft what remains of its visit budget, vfBudget(codeLen): the
	// flow fixpoints of all the functions together take from it, so a
	// program of many functions that each stay under their own budget
	// cannot multiply the work by its number of functions.
	codeLen    int
	visitsLeft int

	// Scratch reused by every function: the flow state (flow) and the
	// leader sets (vfLeaders).
	scratch               vfFlow
	blockLead, regionLead vfBits
}

func (v *verifier) progErr(format string, args ...any) error {
	return &VerifyError{File: v.p.File, PC: -1, Reason: fmt.Sprintf(format, args...)}
}

func (v *verifier) funcErr(fi, pc int, format string, args ...any) error {
	f := &v.p.Funcs[fi]
	return &VerifyError{File: v.p.FuncFile(fi), Line: f.Line(pc), Func: f.Name, PC: pc, Reason: fmt.Sprintf(format, args...)}
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
	if err := v.checkNames(); err != nil {
		return err
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
		if p.ABI.Before(in.Since) {
			return v.importErr(i, "import %d %q needs intrinsic ABI %s but the program declares .abi %s; raise the program's .abi to %s", i, imp.Name, in.Since, p.ABI, in.Since)
		}
		v.imports[i] = in
	}
	return nil
}

// checkNames checks that every function has a name of its own. It reports
// the first function in index order that has none or repeats an earlier
// one. It sorts 4-byte indices rather than filling a map of the names:
// a program of a million small functions would need about 60 MB for the
// map, a multiple of its file (docs/JASM.md, memory).
func (v *verifier) checkNames() error {
	fns := v.p.Funcs
	empty := slices.IndexFunc(fns, func(f Function) bool { return f.Name == "" })
	order := make([]int32, len(fns))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return strings.Compare(fns[a].Name, fns[b].Name) })
	first, dup := -1, -1 // the repeat with the lowest index, and its name's first function
	for k := 1; k < len(order); k++ {
		a, b := order[k-1], order[k]
		if fns[a].Name == fns[b].Name && fns[b].Name != "" && (dup < 0 || int(b) < dup) {
			if k < 2 || fns[order[k-2]].Name != fns[b].Name { // b is the second of its name
				first, dup = int(a), int(b)
			}
		}
	}
	switch {
	case empty >= 0 && (dup < 0 || empty < dup):
		return v.progErr("function %d has no name; every function needs a unique name", empty)
	case dup >= 0:
		return v.progErr("functions %d and %d are both named %q; function names must be unique", first, dup, fns[dup].Name)
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
	v.blockLead, v.regionLead = vfLeaders(f, v.blockLead, v.regionLead)
	if err := v.flow(fi, v.regionLead, handlerAt); err != nil {
		return nil, err
	}
	for _, rules := range []*elemRules{&chanRules, &mapRules} {
		if v.usesTyped(fi, rules) {
			if err := v.checkElems(fi, v.regionLead, handlerAt, rules); err != nil {
				return nil, err
			}
		}
	}
	return buildBlocks(f, v.blockLead), nil
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
			return v.funcErr(fi, pc, "%s to %s passes %s, %s takes %d", name, QuoteName(callee.Name), vfPlural(c, "argument"), QuoteName(callee.Name), len(callee.Params))
		}
		if op == SPAWN && ins.B() > SpawnDetached {
			return v.funcErr(fi, pc, "spawn of %s: field B is %d; it is 0 (the task handle lands in r%d) or %d (detached: no handle, no register written)", QuoteName(callee.Name), ins.B(), a, SpawnDetached)
		}
		if op == SPAWN && ins.B() == SpawnDetached && p.ABI.Before(SpawnDetachedABI) {
			return v.funcErr(fi, pc, "a detached spawn (spawn _) needs ABI %s but the program declares .abi %s; raise the program's .abi to %s", SpawnDetachedABI, p.ABI, SpawnDetachedABI)
		}
		if (op == SPAWN && ins.B() == 0 || op == CALL && callee.Result != TVoid) && a >= f.NRegs {
			return v.funcErr(fi, pc, "%s to %s: result register r%d outside the frame of %d registers %s", name, QuoteName(callee.Name), a, f.NRegs, vfRegRange(f.NRegs))
		}
		if op == TAILCALL && callee.Result != f.Result {
			return v.funcErr(fi, pc, "tailcall to %s, which returns %s, from %s, which returns %s; a tailcall needs the same result type (use call and ret instead)", QuoteName(callee.Name), callee.Result, QuoteName(f.Name), f.Result)
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
	if since, ok := opSince[op]; ok && p.ABI.Before(since) {
		return v.funcErr(fi, pc, "%s needs ABI %s but the program declares .abi %s; raise the program's .abi to %s", name, since, p.ABI, since)
	}
	if in := BuiltinIntrinsic(op); in != nil && p.ABI.Before(in.Since) {
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
