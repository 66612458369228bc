package jasm

import (
	"fmt"
	"sort"
	"strings"

	"github.com/jadevm/jade/vmloop"
)

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
