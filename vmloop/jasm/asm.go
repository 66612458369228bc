package jasm

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/jadevm/jade/vmloop"
)

// Assemble translates Jade assembly (docs/JASM.md) into a Program. The
// result is not verified: pass it to vmloop.Verify before running it.
// Assemble reads no file: a module import resolves only in the built-in
// standard library (std/...), so a host may assemble untrusted text. Link
// and AssembleFile find modules on disk too.
//
// On errors it returns a nil Program and an ErrorList of *Error, each
// "file:line:col: message", in source order (at most ten). It never panics.
func Assemble(filename string, src []byte) (prog *vmloop.Program, err error) {
	return link(filename, src, LinkOptions{}, true)
}

type funcSig struct {
	name   string // in the program (alias.fn for a module's function)
	params []vmloop.Type
	result vmloop.Type
}

type assembler struct {
	d     *diag // of cur
	files []*srcFile
	cur   *srcFile // the file being assembled
	prog  *vmloop.Program

	funcIdx map[string]int
	sigs    []funcSig
	kint    map[int64]int
	kflt    map[uint64]int
	kstr    map[string]int
	kbytes  map[string]int
	intr    map[string]int
}

func (a *assembler) errorf(at pos, format string, args ...any) { a.d.errorf(at, format, args...) }

func (a *assembler) program() *vmloop.Program {
	root := a.files[0]
	p := &vmloop.Program{ABI: vmloop.ABI, File: root.name}
	a.prog = p
	if root.ast.abi != nil {
		p.ABI = *root.ast.abi
		p.ABILine = int32(root.ast.abiPos.line)
	}
	a.kint = map[int64]int{}
	a.kflt = map[uint64]int{}
	a.kstr = map[string]int{}
	a.kbytes = map[string]int{}
	a.intr = map[string]int{}
	for _, f := range a.files {
		a.setFile(f)
		if !f.root {
			a.moduleABI(f)
		}
		for _, pd := range f.ast.pools {
			a.poolDirective(pd)
		}
	}
	a.funcIdx = map[string]int{}
	var defs []*funcAST
	var defFile []*srcFile
	for _, f := range a.files {
		a.setFile(f)
		for _, fn := range f.ast.funcs {
			name := f.prefix + fn.name
			if fn.bad {
				// reported already
			} else if j, dup := a.funcIdx[name]; dup {
				a.errorf(fn.namePos, "duplicate function %s (first defined at %s)", name, posString(defFile[j].name, defs[j].namePos))
			} else {
				a.funcIdx[name] = len(defs)
			}
			sig := funcSig{name: name, result: fn.result}
			for _, pd := range fn.params {
				sig.params = append(sig.params, pd.typ)
			}
			a.sigs = append(a.sigs, sig)
			defs, defFile = append(defs, fn), append(defFile, f)
		}
	}
	for i, fn := range defs {
		a.setFile(defFile[i])
		if a.d.full() { // the errors so far are all this file reports
			break
		}
		vf := a.function(i, fn)
		vf.Name = a.sigs[i].name
		if !a.cur.root {
			vf.File = a.cur.name
		}
		p.Funcs = append(p.Funcs, vf)
	}
	return p
}

func (a *assembler) setFile(f *srcFile) { a.cur, a.d = f, f.d }

// moduleABI folds the .abi of module f into the program's: the linked
// program needs the highest minor version any of its files declares, and
// every file must declare the same major.
func (a *assembler) moduleABI(f *srcFile) {
	v := f.ast.abi
	if v == nil {
		return
	}
	p := a.prog
	if v.Major != p.ABI.Major {
		a.errorf(f.ast.abiPos, "module %s needs ABI %s, the program %s: the major versions differ", f.name, v, p.ABI)
		return
	}
	if v.Minor > p.ABI.Minor {
		p.ABI, p.ABILine = *v, 0
	}
}

func (a *assembler) poolDirective(pd poolDecl) {
	p, o := a.prog, pd.op
	switch pd.dir {
	case ".import":
		name, ok := a.intrName(o)
		if !ok {
			return
		}
		if _, seen := a.intr[name]; !seen {
			a.intr[name] = len(p.Intrinsics)
		}
		imp := vmloop.Import{Name: name, Line: int32(o.pos.line), Col: int32(o.pos.col)}
		if !a.cur.root {
			imp.Line, imp.Col = 0, 0 // Import has no file: a position would name the program's
		}
		p.Intrinsics = append(p.Intrinsics, imp)
	case ".kint":
		v, ok := a.intLit(o, "a .kint entry")
		if !ok {
			return
		}
		if _, seen := a.kint[v]; !seen {
			a.kint[v] = len(p.KInt)
		}
		p.KInt = append(p.KInt, v)
	case ".kflt":
		v, ok := a.floatLit(o, "a .kflt entry")
		if !ok {
			return
		}
		if _, seen := a.kflt[math.Float64bits(v)]; !seen {
			a.kflt[math.Float64bits(v)] = len(p.KFlt)
		}
		p.KFlt = append(p.KFlt, v)
	case ".kstr":
		if o.kind != oString {
			a.errorf(o.pos, ".kstr takes string literals, got %s", o.describe())
			return
		}
		if _, seen := a.kstr[o.sval]; !seen {
			a.kstr[o.sval] = len(p.KStr)
		}
		p.KStr = append(p.KStr, o.sval)
	case ".kbytes":
		if o.kind != oString {
			a.errorf(o.pos, ".kbytes takes string literals (their bytes), got %s", o.describe())
			return
		}
		if _, seen := a.kbytes[o.sval]; !seen {
			a.kbytes[o.sval] = len(p.KBytes)
		}
		p.KBytes = append(p.KBytes, []byte(o.sval))
	}
}

// intrName parses an intrinsic name operand: family.name or a quoted string.
func (a *assembler) intrName(o *operand) (string, bool) {
	switch o.kind {
	case oString:
		return o.sval, true
	case oIdent:
		if isIntrName(o.text) {
			return o.text, true
		}
		a.errorf(o.pos, "malformed intrinsic name %s: intrinsics are named family.name, e.g. io.print_i64", o.text)
	default:
		a.errorf(o.pos, "expected an intrinsic name (family.name), got %s", o.describe())
	}
	return "", false
}

// ---- literals ----

func (a *assembler) intLit(o *operand, what string) (int64, bool) {
	if o.kind == oInt {
		return o.ival, true
	}
	a.errorf(o.pos, "%s must be an integer literal, got %s", what, o.describe())
	return 0, false
}

// floatLit accepts float literals, inf/nan and exactly representable
// integers.
func (a *assembler) floatLit(o *operand, what string) (float64, bool) {
	switch o.kind {
	case oFloat:
		return o.fval, true
	case oInt:
		f := float64(o.ival)
		if f >= 0x1p63 || int64(f) != o.ival {
			a.errorf(o.pos, "%s: integer %s has no exact f64 value; write it as a float literal", what, o.text)
			return 0, false
		}
		return f, true
	case oIdent:
		switch o.text {
		case "inf":
			return math.Inf(1), true
		case "nan":
			return math.NaN(), true
		}
	}
	a.errorf(o.pos, "%s must be a float literal (1.5, 2e10, inf, nan), got %s", what, o.describe())
	return 0, false
}

// litType classifies a literal operand: TI64, TF64, TRef (string), or
// TVoid when o is not a literal.
func litType(o *operand) vmloop.Type {
	switch o.kind {
	case oInt:
		return vmloop.TI64
	case oFloat:
		return vmloop.TF64
	case oString:
		return vmloop.TRef
	case oIdent:
		if o.text == "inf" || o.text == "nan" {
			return vmloop.TF64
		}
	}
	return vmloop.TVoid
}

// ---- pools ----

func (a *assembler) poolInt(v int64) int32 {
	if i, ok := a.kint[v]; ok {
		return int32(i)
	}
	a.kint[v] = len(a.prog.KInt)
	a.prog.KInt = append(a.prog.KInt, v)
	return int32(len(a.prog.KInt) - 1)
}

func (a *assembler) poolFlt(v float64) int32 {
	b := math.Float64bits(v)
	if i, ok := a.kflt[b]; ok {
		return int32(i)
	}
	a.kflt[b] = len(a.prog.KFlt)
	a.prog.KFlt = append(a.prog.KFlt, v)
	return int32(len(a.prog.KFlt) - 1)
}

func (a *assembler) poolStr(v string) int32 {
	if i, ok := a.kstr[v]; ok {
		return int32(i)
	}
	a.kstr[v] = len(a.prog.KStr)
	a.prog.KStr = append(a.prog.KStr, v)
	return int32(len(a.prog.KStr) - 1)
}

func (a *assembler) poolBytes(v string) int32 {
	if i, ok := a.kbytes[v]; ok {
		return int32(i)
	}
	a.kbytes[v] = len(a.prog.KBytes)
	a.prog.KBytes = append(a.prog.KBytes, []byte(v))
	return int32(len(a.prog.KBytes) - 1)
}

func (a *assembler) poolIntr(name string) int32 {
	if i, ok := a.intr[name]; ok {
		return int32(i)
	}
	a.intr[name] = len(a.prog.Intrinsics)
	a.prog.Intrinsics = append(a.prog.Intrinsics, vmloop.Import{Name: name})
	return int32(len(a.prog.Intrinsics) - 1)
}

func (a *assembler) index(o *operand, n int, pool string) (int32, bool) {
	if !a.cur.root {
		a.errorf(o.pos, "pool index %s in an imported module: indices are those of the linked program; write the literal or name instead", o.text)
		return 0, false
	}
	if o.ival >= int64(n) {
		a.errorf(o.pos, "index %s is out of range: the %s has %d entries", o.text, pool, n)
		return 0, false
	}
	return int32(o.ival), true
}

// constRef resolves an OConstI/OConstF/OConstS/OConstB operand: a literal
// (pooled, deduplicated) or #N.
func (a *assembler) constRef(kind vmloop.OperandKind, o *operand) (int32, bool) {
	switch kind {
	case vmloop.OConstI:
		if o.kind == oIndex {
			return a.index(o, len(a.prog.KInt), "i64 pool")
		}
		v, ok := a.intLit(o, "the i64 constant")
		if !ok {
			return 0, false
		}
		return a.poolInt(v), true
	case vmloop.OConstF:
		if o.kind == oIndex {
			return a.index(o, len(a.prog.KFlt), "f64 pool")
		}
		v, ok := a.floatLit(o, "the f64 constant")
		if !ok {
			return 0, false
		}
		return a.poolFlt(v), true
	case vmloop.OConstB:
		if o.kind == oIndex {
			return a.index(o, len(a.prog.KBytes), "bytes pool")
		}
		if o.kind != oString {
			a.errorf(o.pos, "expected a string literal (its bytes), got %s", o.describe())
			return 0, false
		}
		return a.poolBytes(o.sval), true
	default:
		if o.kind == oIndex {
			return a.index(o, len(a.prog.KStr), "string pool")
		}
		if o.kind != oString {
			a.errorf(o.pos, "expected a string literal, got %s", o.describe())
			return 0, false
		}
		return a.poolStr(o.sval), true
	}
}

// funcRef resolves a function operand: a name, a quoted name or #N.
func (a *assembler) funcRef(o *operand) (int32, *funcSig, bool) {
	switch o.kind {
	case oIndex:
		i, ok := a.index(o, len(a.sigs), "function table")
		if !ok {
			return 0, nil, false
		}
		return i, &a.sigs[i], true
	case oIdent, oString:
		name, ok := a.funcName(o)
		if !ok {
			return 0, nil, false
		}
		if i, ok := a.funcIdx[name]; ok {
			return int32(i), &a.sigs[i], true
		}
		if a.d.full() {
			return 0, nil, false // not reported: skip collecting suggestions
		}
		msg := "unknown function " + name
		names := make([]string, 0, len(a.funcIdx))
		for n := range a.funcIdx {
			names = append(names, n)
		}
		sort.Strings(names)
		if s := closest(name, names); s != "" {
			msg += " (did you mean " + s + "?)"
		} else {
			msg += " (define it with .func " + name + "(...))"
		}
		a.errorf(o.pos, "%s", msg)
	default:
		a.errorf(o.pos, "expected a function name, got %s", o.describe())
	}
	return 0, nil, false
}

// intrRef resolves an intrinsic operand to an import index, adding the
// import on first use. It returns the import's name.
func (a *assembler) intrRef(o *operand) (int32, string, bool) {
	if o.kind == oIndex {
		i, ok := a.index(o, len(a.prog.Intrinsics), "intrinsic import table")
		if !ok {
			return 0, "", false
		}
		return i, a.prog.Intrinsics[i].Name, true
	}
	if o.kind == oIdent && !strings.Contains(o.text, ".") {
		a.errorf(o.pos, "malformed intrinsic name %s: intrinsics are named family.name, e.g. io.print_i64", o.text)
		return 0, "", false
	}
	name, ok := a.intrName(o)
	if !ok {
		return 0, "", false
	}
	return a.poolIntr(name), name, true
}

// ---- functions ----

// emitted is one instruction word being built; target is a label operand
// whose pc goes into D once all labels are known.
type emitted struct {
	ins    vmloop.Instr
	line   int32
	target *operand
}

type fnState struct {
	a      *assembler
	ast    *funcAST
	names  map[string]int
	types  []vmloop.Type // declared type per register (TVoid: untyped)
	rnames []string
	frame  int // registers before the hidden call window
	hidden int // size of the hidden call window
	code   []emitted
	labels map[string]int
	lpos   map[string]pos
	line   int32
}

func (f *fnState) errorf(at pos, format string, args ...any) { f.a.d.errorf(at, format, args...) }

func (a *assembler) function(idx int, ast *funcAST) vmloop.Function {
	f := &fnState{a: a, ast: ast, names: map[string]int{}, labels: map[string]int{}, lpos: map[string]pos{}}
	fn := vmloop.Function{Name: ast.name, Result: ast.result, Params: []vmloop.Type{}}
	declare := func(d regDecl) {
		if d.name != "" {
			if j, dup := f.names[d.name]; dup {
				what := "local"
				if j < len(ast.params) {
					what = "parameter"
				}
				f.errorf(d.pos, "duplicate register %s (already declared as %s r%d)", d.name, what, j)
			} else {
				f.names[d.name] = len(f.types)
			}
		}
		f.types = append(f.types, d.typ)
		f.rnames = append(f.rnames, d.name)
	}
	for _, d := range ast.params {
		fn.Params = append(fn.Params, d.typ)
		declare(d)
	}
	for _, d := range ast.locals {
		declare(d)
	}
	declared := len(f.types)
	if declared > vmloop.MaxRegs {
		f.errorf(ast.pos, "function %s declares %d registers; a frame holds at most %d", ast.name, declared, vmloop.MaxRegs)
		return fn
	}

	// The frame: declared registers, .regs, every raw register and raw
	// window named in the body. Friendly calls put their hidden window
	// above all of that, so it never overlaps a register the source uses.
	frame := max(declared, ast.regs)
	for _, it := range ast.body {
		if it.ins == nil || it.ins.word {
			continue
		}
		for _, o := range it.ins.ops {
			frame = max(frame, f.extent(o))
		}
	}
	for _, t := range ast.tries {
		frame = max(frame, f.extent(t.ops[3]))
	}
	if frame > vmloop.MaxRegs {
		f.errorf(ast.pos, "function %s needs %d registers; a frame holds at most %d", ast.name, frame, vmloop.MaxRegs)
		return fn
	}
	f.frame = frame

	for _, it := range ast.body {
		if f.a.d.full() { // stop at the error cap; the function is not kept
			return fn
		}
		if it.ins == nil {
			if _, dup := f.labels[it.label]; dup {
				f.errorf(it.pos, "duplicate label %s (first defined at line %d)", it.label, f.lpos[it.label].line)
				continue
			}
			f.labels[it.label] = len(f.code)
			f.lpos[it.label] = it.pos
			continue
		}
		f.line = int32(it.ins.pos.line)
		f.instruction(it.ins)
	}

	// Labels and handlers.
	fn.Code = make([]vmloop.Instr, len(f.code))
	fn.Lines = make([]int32, len(f.code))
	for pc, e := range f.code {
		if e.target != nil {
			if t, ok := f.label(e.target); ok {
				e.ins = vmloop.Instr(uint64(e.ins)&0xffffffff | uint64(uint32(t))<<32)
			}
		}
		fn.Code[pc] = e.ins
		fn.Lines[pc] = e.line
	}
	fn.Handlers = f.handlers()
	fn.NRegs = f.frame + f.hidden
	fn.RegNames = make([]string, fn.NRegs)
	fn.RegTypes = make([]vmloop.Type, fn.NRegs)
	copy(fn.RegNames, f.rnames)
	copy(fn.RegTypes, f.types)
	fn.Labels = map[int]string{}
	for name, pc := range f.labels {
		if old, ok := fn.Labels[pc]; !ok || f.lpos[name].line < f.lpos[old].line ||
			f.lpos[name].line == f.lpos[old].line && f.lpos[name].col < f.lpos[old].col {
			fn.Labels[pc] = name
		}
	}
	return fn
}

// extent returns 1 + the highest register a raw register or window operand
// touches (0 for other operands).
func (f *fnState) extent(o *operand) int {
	switch o.kind {
	case oIdent:
		if n, ok := rawReg(o.text); ok && n < vmloop.MaxRegs {
			return n + 1
		}
	case oWindow:
		base := -1
		if n, ok := rawReg(o.base.text); ok {
			base = n
		} else if i, ok := f.names[o.base.text]; ok {
			base = i
		}
		if base >= 0 && base < vmloop.MaxRegs && o.count.ival >= 0 && o.count.ival <= vmloop.MaxRegs &&
			base+int(o.count.ival) <= vmloop.MaxRegs {
			return max(base+int(o.count.ival), base+1)
		}
	}
	return 0
}

func (f *fnState) label(o *operand) (int, bool) {
	if o.kind != oIdent {
		f.errorf(o.pos, "expected a label, got %s", o.describe())
		return 0, false
	}
	if pc, ok := f.labels[o.text]; ok {
		return pc, true
	}
	if f.a.d.full() {
		return 0, false // not reported: skip collecting suggestions
	}
	msg := "undefined label " + o.text
	names := make([]string, 0, len(f.labels))
	for n := range f.labels {
		names = append(names, n)
	}
	sort.Strings(names)
	if s := closest(o.text, names); s != "" {
		msg += " (did you mean " + s + "?)"
	}
	f.errorf(o.pos, "%s", msg)
	return 0, false
}

// ---- registers ----

type regRef struct {
	idx   int
	typ   vmloop.Type // declared type; TVoid for raw registers
	named bool
	name  string
}

// reg resolves a register operand: a declared name or a raw rN.
func (f *fnState) reg(o *operand, ctx string) (regRef, bool) {
	if o.kind != oIdent {
		msg := fmt.Sprintf("%s: expected a register, got %s", ctx, o.describe())
		if o.kind == oInt {
			if op, ok := vmloop.OpByName(ctx + "i"); ok {
				msg += fmt.Sprintf(" (for an immediate operand use %s)", op)
			} else if ctx == "mov" {
				msg += " (to load a literal use const)"
			}
		}
		f.errorf(o.pos, "%s", msg)
		return regRef{}, false
	}
	if o.text == "_" {
		f.errorf(o.pos, "%s: _ discards a result; it is only allowed as the destination of call, intr, spawn and join", ctx)
		return regRef{}, false
	}
	if n, ok := rawReg(o.text); ok {
		if n >= vmloop.MaxRegs {
			f.errorf(o.pos, "register %s out of range: raw registers are r0..r%d", o.text, vmloop.MaxRegs-1)
			return regRef{}, false
		}
		return regRef{idx: n}, true
	}
	if i, ok := f.names[o.text]; ok {
		return regRef{idx: i, typ: f.types[i], named: true, name: o.text}, true
	}
	if litType(o) != vmloop.TVoid {
		f.errorf(o.pos, "%s: expected a register, got the float literal %s", ctx, o.text)
		return regRef{}, false
	}
	if f.a.d.full() {
		return regRef{}, false // not reported: skip collecting suggestions
	}
	msg := fmt.Sprintf("%s: unknown register %s", ctx, o.text)
	names := make([]string, 0, len(f.names))
	for n := range f.names {
		names = append(names, n)
	}
	sort.Strings(names)
	if s := closest(o.text, names); s != "" {
		msg += " (did you mean " + s + "?)"
	} else if !strings.Contains(o.text, ".") {
		msg += fmt.Sprintf(" (declare it with .local %s:i64, or f64, or ref)", o.text)
	}
	f.errorf(o.pos, "%s", msg)
	return regRef{}, false
}

// check reports a type error when a named register's declared type is not
// want. Raw registers are untyped and always pass.
func (f *fnState) check(r regRef, want vmloop.Type, o *operand, ctx, role string) bool {
	if !r.named || want == vmloop.TVoid || r.typ == want {
		return true
	}
	f.errorf(o.pos, "%s: %s must be %s, but %s is declared %s", ctx, role, want, r.name, r.typ)
	return false
}

// ---- instructions ----

type fields struct {
	a, b, c uint8
	d       int32
}

func (x *fields) set(fl vmloop.Field, v int64) {
	switch fl {
	case vmloop.FA:
		x.a = uint8(v)
	case vmloop.FB:
		x.b = uint8(v)
	case vmloop.FC:
		x.c = uint8(v)
	case vmloop.FD:
		x.d = int32(v)
	case vmloop.FBC:
		u := uint16(int16(v))
		x.b, x.c = uint8(u), uint8(u>>8)
	case vmloop.FD0:
		x.d = int32(uint32(x.d)&^0xff | uint32(uint8(v)))
	case vmloop.FD1:
		x.d = int32(uint32(x.d)&^0xff00 | uint32(uint8(v))<<8)
	}
}

func (f *fnState) emit(op vmloop.Op, x fields, target *operand) {
	f.code = append(f.code, emitted{ins: vmloop.Encode(op, x.a, x.b, x.c, x.d), line: f.line, target: target})
}

func (f *fnState) instruction(ins *instr) {
	if ins.word {
		f.code = append(f.code, emitted{ins: vmloop.Instr(uint64(ins.ops[0].ival)), line: f.line})
		return
	}
	switch ins.mnem {
	case "mov":
		f.lowerMov(ins)
		return
	case "const":
		f.lowerConst(ins)
		return
	case "join":
		f.lowerJoin(ins)
		return
	case "ret":
		if len(ins.ops) == 0 {
			if f.ast.result != vmloop.TVoid {
				f.errorf(ins.pos, "ret: function %s returns %s, so ret needs a value: ret x", f.ast.name, f.ast.result)
				return
			}
			f.emit(vmloop.RETV, fields{}, nil)
			return
		}
	case "call", "spawn", "intr", "tailcall":
		if len(ins.ops) == 0 || ins.ops[0].kind != oWindow {
			op, _ := vmloop.OpByName(ins.mnem)
			f.lowerCall(ins, op)
			return
		}
	}
	op, ok := vmloop.OpByName(ins.mnem)
	if !ok { // the parser reported it (unknownMnemonic)
		return
	}
	f.generic(ins, op)
}

// mnemonics lists every mnemonic the assembler knows, for suggestions.
var mnemonics = func() []string {
	names := []string{"mov", "const", "join"}
	for i := 0; i < vmloop.NumOps; i++ {
		if info, ok := vmloop.Op(i).Info(); ok {
			names = append(names, info.Name)
		}
	}
	return names
}()

// unknownMnemonic returns the diagnostic for a mnemonic the assembler does
// not know, or "" when it knows it. The parser reports it, so that a file
// of unknown words stops at the error cap without being parsed to its end.
func unknownMnemonic(m string) string {
	if _, ok := vmloop.OpByName(m); ok || m == "mov" || m == "const" || m == "join" { // mnemonics, in O(1)
		return ""
	}
	msg := "unknown mnemonic " + m
	if s := closest(m, mnemonics); s != "" {
		msg += " (did you mean " + s + "?)"
	}
	return msg
}

// signature renders an opcode's operand list for error messages.
func signature(op vmloop.Op) string {
	info, _ := op.Info()
	parts := make([]string, 0, len(info.Operands))
	for _, od := range info.Operands {
		parts = append(parts, operandSig(od))
	}
	if len(parts) == 0 {
		return info.Name
	}
	return info.Name + " " + strings.Join(parts, ", ")
}

func operandSig(od vmloop.Operand) string {
	switch od.Kind {
	case vmloop.ODst:
		return "dst:" + typeOrAny(od.Type)
	case vmloop.OSrc:
		return "src:" + typeOrAny(od.Type)
	case vmloop.OSrcDst:
		return "reg:" + typeOrAny(od.Type)
	case vmloop.OImm:
		if od.Field == vmloop.FBC {
			return "imm16"
		}
		return "imm32"
	case vmloop.OTarget:
		return "label"
	case vmloop.OConstI:
		return "int"
	case vmloop.OConstF:
		return "float"
	case vmloop.OConstS:
		return "\"string\""
	case vmloop.OConstB:
		return "\"bytes\""
	case vmloop.OFunc:
		return "func"
	case vmloop.OIntr:
		return "family.name"
	case vmloop.OWindow:
		return "(base, nargs)"
	case vmloop.OElemType:
		return "i64|f64|ref"
	}
	return "?"
}

func typeOrAny(t vmloop.Type) string {
	if t == vmloop.TVoid {
		return "result"
	}
	return t.String()
}

func immRange(fl vmloop.Field) (lo, hi int64, bits string) {
	switch fl {
	case vmloop.FBC:
		return math.MinInt16, math.MaxInt16, "16"
	case vmloop.FD:
		return math.MinInt32, math.MaxInt32, "32"
	default:
		return 0, 255, "8"
	}
}

// generic assembles an instruction straight from its ISA table row.
func (f *fnState) generic(ins *instr, op vmloop.Op) {
	info, _ := op.Info()
	if len(ins.ops) != len(info.Operands) {
		at := ins.pos
		if len(ins.ops) > len(info.Operands) {
			at = ins.ops[len(info.Operands)].pos
		}
		f.errorf(at, "%s takes %d operand(s), got %d: %s", info.Name, len(info.Operands), len(ins.ops), signature(op))
		return
	}
	var x fields
	var target *operand
	ok := true
	for i, od := range info.Operands {
		o := ins.ops[i]
		switch od.Kind {
		case vmloop.ODst, vmloop.OSrc, vmloop.OSrcDst:
			r, good := f.reg(o, info.Name)
			if !good {
				ok = false
				continue
			}
			want := od.Type
			if op == vmloop.RET {
				want = f.ast.result
				if want == vmloop.TVoid {
					f.errorf(ins.pos, "ret: function %s returns void; write ret without a value", f.ast.name)
					ok = false
					continue
				}
			}
			if !f.check(r, want, o, info.Name, fmt.Sprintf("operand %d", i+1)) {
				ok = false
			}
			x.set(od.Field, int64(r.idx))
		case vmloop.OImm:
			v, good := f.a.intLit(o, fmt.Sprintf("%s: operand %d", info.Name, i+1))
			if !good {
				ok = false
				continue
			}
			lo, hi, bits := immRange(od.Field)
			if v < lo || v > hi {
				msg := fmt.Sprintf("%s: immediate %s does not fit in %s bits (%d..%d)", info.Name, o.text, bits, lo, hi)
				if reg, ok := vmloop.OpByName(strings.TrimSuffix(info.Name, "i")); ok && strings.HasSuffix(info.Name, "i") {
					msg += fmt.Sprintf("; load it into a register with const and use %s", reg)
				} else if op == vmloop.LDI {
					msg += "; use ldk (pooled) or const, which picks ldk for you"
				}
				f.errorf(o.pos, "%s", msg)
				ok = false
				continue
			}
			x.set(od.Field, v)
		case vmloop.OTarget:
			if o.kind != oIdent {
				f.errorf(o.pos, "%s: expected a label, got %s", info.Name, o.describe())
				ok = false
				continue
			}
			target = o
		case vmloop.OConstI, vmloop.OConstF, vmloop.OConstS, vmloop.OConstB:
			idx, good := f.a.constRef(od.Kind, o)
			if !good {
				ok = false
				continue
			}
			x.set(od.Field, int64(idx))
		case vmloop.OFunc:
			idx, _, good := f.a.funcRef(o)
			if !good {
				ok = false
				continue
			}
			x.set(od.Field, int64(idx))
		case vmloop.OIntr:
			idx, name, good := f.a.intrRef(o)
			if !good {
				ok = false
				continue
			}
			if in, known := vmloop.LookupIntrinsic(name); known && !in.IntrOK {
				f.errorf(o.pos, "%s cannot be called through intr; use its builtin instruction %s", name, in.Builtin)
				ok = false
			}
			x.set(od.Field, int64(idx))
		case vmloop.OWindow:
			base, n, good := f.window(o, info.Name)
			if !good {
				ok = false
				continue
			}
			x.set(od.Field, int64(base))
			x.set(vmloop.FC, int64(n))
		case vmloop.OElemType:
			switch {
			case o.kind == oIdent && (o.text == "i64" || o.text == "f64" || o.text == "ref"):
				t, _ := vmloop.ParseType(o.text)
				x.set(od.Field, int64(t))
			case o.kind == oInt && o.ival >= 0 && o.ival <= 255:
				x.set(od.Field, o.ival)
			default:
				f.errorf(o.pos, "%s: expected an element type (i64, f64 or ref), got %s", info.Name, o.describe())
				ok = false
			}
		}
	}
	if op == vmloop.RETV && f.ast.result != vmloop.TVoid {
		f.errorf(ins.pos, "retv: function %s returns %s; use ret x", f.ast.name, f.ast.result)
		ok = false
	}
	if ok {
		f.emit(op, x, target)
	}
}

// window resolves a raw window operand (base, count).
func (f *fnState) window(o *operand, ctx string) (int, int, bool) {
	if o.kind != oWindow {
		f.errorf(o.pos, "%s: expected a window (base, nargs), got %s", ctx, o.describe())
		return 0, 0, false
	}
	r, ok := f.reg(o.base, ctx)
	if !ok {
		return 0, 0, false
	}
	n := o.count.ival
	if n < 0 || n > 255 {
		f.errorf(o.count.pos, "%s: argument count %s out of range 0..255", ctx, o.count.text)
		return 0, 0, false
	}
	if r.idx+int(n) > vmloop.MaxRegs {
		f.errorf(o.pos, "%s: window %s runs past r%d", ctx, o.text, vmloop.MaxRegs-1)
		return 0, 0, false
	}
	return r.idx, int(n), true
}
