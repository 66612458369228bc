package jasm

import (
	"fmt"
	"math"

	"github.com/jadevm/jade/vmloop"
)

// Friendly forms: mnemonics that are not ISA opcodes (mov, const, join) or
// ISA mnemonics written without a window (call, spawn, intr, tailcall).
// Each lowers to plain opcodes; docs/JASM.md lists the rules.

var movOp = [...]vmloop.Op{vmloop.TI64: vmloop.MOVI, vmloop.TF64: vmloop.MOVF, vmloop.TRef: vmloop.MOVR}

func (f *fnState) mov(t vmloop.Type, dst, src int) {
	f.emit(movOp[t], fields{a: uint8(dst), b: uint8(src)}, nil)
}

func (f *fnState) lowerMov(ins *instr) {
	if len(ins.ops) != 2 {
		f.errorf(ins.pos, "mov takes 2 operands (mov dst, src), got %d", len(ins.ops))
		return
	}
	d, ok1 := f.reg(ins.ops[0], "mov")
	if ok1 && litType(ins.ops[1]) != vmloop.TVoid {
		f.errorf(ins.ops[1].pos, "mov copies a register; to load the literal %s use const %s, %s", ins.ops[1].text, ins.ops[0].text, ins.ops[1].text)
		return
	}
	s, ok2 := f.reg(ins.ops[1], "mov")
	if !ok1 || !ok2 {
		return
	}
	t := d.typ
	if t == vmloop.TVoid {
		t = s.typ
	}
	switch {
	case t == vmloop.TVoid:
		f.errorf(ins.pos, "mov: cannot tell the type of %s and %s (raw registers are untyped); use movi, movf or movr", ins.ops[0].text, ins.ops[1].text)
	case d.named && s.named && d.typ != s.typ:
		hint := ""
		if d.typ == vmloop.TF64 && s.typ == vmloop.TI64 {
			hint = " (convert with itof)"
		} else if d.typ == vmloop.TI64 && s.typ == vmloop.TF64 {
			hint = " (convert with ftoi)"
		}
		f.errorf(ins.ops[1].pos, "mov: %s is %s but %s is %s%s", d.name, d.typ, s.name, s.typ, hint)
	default:
		f.mov(t, d.idx, s.idx)
	}
}

func (f *fnState) lowerConst(ins *instr) {
	if len(ins.ops) != 2 {
		f.errorf(ins.pos, "const takes 2 operands (const dst, literal), got %d", len(ins.ops))
		return
	}
	d, ok := f.reg(ins.ops[0], "const")
	if !ok {
		return
	}
	f.loadConst(d, ins.ops[1], "const")
}

// loadConst loads literal o into register d, picking ldi, ldk, ldf or lds
// from d's declared type (or, for a raw register, the literal's kind).
func (f *fnState) loadConst(d regRef, o *operand, ctx string) bool {
	lt := litType(o)
	if lt == vmloop.TVoid {
		if o.kind == oIndex {
			f.errorf(o.pos, "%s takes a literal; to name a pool entry use ldk, ldf or lds with %s", ctx, o.text)
		} else {
			f.errorf(o.pos, "%s: expected a literal (integer, float or \"string\"), got %s", ctx, o.describe())
		}
		return false
	}
	t := d.typ
	if t == vmloop.TVoid {
		t = lt
	}
	what := "the destination"
	if d.named {
		what = d.name
	}
	switch t {
	case vmloop.TI64:
		if lt != vmloop.TI64 {
			f.errorf(o.pos, "%s: %s is i64 but %s is a %s literal", ctx, what, o.text, litName(lt))
			return false
		}
		if o.ival >= math.MinInt32 && o.ival <= math.MaxInt32 {
			f.emit(vmloop.LDI, fields{a: uint8(d.idx), d: int32(o.ival)}, nil)
		} else {
			f.emit(vmloop.LDK, fields{a: uint8(d.idx), d: f.a.poolInt(o.ival)}, nil)
		}
	case vmloop.TF64:
		if lt == vmloop.TRef {
			f.errorf(o.pos, "%s: %s is f64 but %s is a string literal", ctx, what, o.text)
			return false
		}
		v, ok := f.a.floatLit(o, ctx)
		if !ok {
			return false
		}
		f.emit(vmloop.LDF, fields{a: uint8(d.idx), d: f.a.poolFlt(v)}, nil)
	case vmloop.TRef:
		if lt != vmloop.TRef {
			f.errorf(o.pos, "%s: %s is ref; only string literals can be loaded into a ref (got %s)", ctx, what, o.describe())
			return false
		}
		f.emit(vmloop.LDS, fields{a: uint8(d.idx), d: f.a.poolStr(o.sval)}, nil)
	}
	return true
}

func litName(t vmloop.Type) string {
	switch t {
	case vmloop.TF64:
		return "float"
	case vmloop.TRef:
		return "string"
	}
	return "integer"
}

var joinOp = [...]vmloop.Op{vmloop.TI64: vmloop.JOINI, vmloop.TF64: vmloop.JOINF, vmloop.TRef: vmloop.JOINR}

func (f *fnState) lowerJoin(ins *instr) {
	if len(ins.ops) != 2 {
		f.errorf(ins.pos, "join takes 2 operands (join dst, task; join _, task drops the value), got %d", len(ins.ops))
		return
	}
	t, ok := f.reg(ins.ops[1], "join")
	if !ok || !f.check(t, vmloop.TRef, ins.ops[1], "join", "the task") {
		return
	}
	if o := ins.ops[0]; o.kind == oIdent && o.text == "_" {
		f.emit(vmloop.JOINV, fields{a: uint8(t.idx)}, nil)
		return
	}
	d, ok := f.reg(ins.ops[0], "join")
	if !ok {
		return
	}
	if d.typ == vmloop.TVoid {
		f.errorf(ins.ops[0].pos, "join: cannot tell the type of %s (raw registers are untyped); use joini, joinf or joinr", ins.ops[0].text)
		return
	}
	f.emit(joinOp[d.typ], fields{a: uint8(d.idx), b: uint8(t.idx)}, nil)
}

type callArg struct {
	o   *operand
	reg regRef
	isR bool
	typ vmloop.Type // TVoid when unknown
}

// lowerCall lowers call dst, fn, args... (and spawn, intr, tailcall fn,
// args...) to moves into a window plus the window form.
func (f *fnState) lowerCall(ins *instr, op vmloop.Op) {
	name := ins.mnem
	ops := ins.ops
	var dst *operand
	if op != vmloop.TAILCALL {
		if len(ops) < 2 {
			what := "fn"
			if op == vmloop.INTR {
				what = "family.name"
			}
			f.errorf(ins.pos, "%s takes a destination and a callee: %s dst, %s, args... (or the window form %s (base, nargs), %s)", name, name, what, name, what)
			return
		}
		dst, ops = ops[0], ops[1:]
	} else if len(ops) < 1 {
		f.errorf(ins.pos, "tailcall takes a callee: tailcall fn, args... (or tailcall (base, nargs), fn)")
		return
	}
	callee, argOps := ops[0], ops[1:]

	var params []vmloop.Type
	result := vmloop.TVoid
	known := false
	var idx int32
	var calleeName string
	ok := true
	if op == vmloop.INTR {
		i, n, good := f.a.intrRef(callee)
		if !good {
			return
		}
		idx, calleeName = i, n
		if in, found := vmloop.LookupIntrinsic(n); found {
			if !in.IntrOK {
				f.errorf(callee.pos, "%s cannot be called through intr; use its builtin instruction %s", n, in.Builtin)
				return
			}
			params, result, known = in.Params, in.Result, true
		}
	} else {
		i, sig, good := f.a.funcRef(callee)
		if !good {
			return
		}
		idx, calleeName = i, sig.name
		params, result, known = sig.params, sig.result, true
	}
	if known && len(argOps) != len(params) {
		f.errorf(callee.pos, "%s: %s takes %d argument(s), got %d", name, calleeName, len(params), len(argOps))
		return
	}

	// Destination.
	var d regRef
	discard := dst != nil && dst.isDiscard()
	// spawn _ is detached where the program's ABI has detached spawns
	// (before it, the handle lands in the hidden window, as it did).
	detach := op == vmloop.SPAWN && discard && !f.a.prog.ABI.Before(vmloop.SpawnDetachedABI)
	if dst != nil && !discard {
		r, good := f.reg(dst, name)
		if !good {
			return
		}
		d = r
		switch op {
		case vmloop.CALL, vmloop.INTR:
			if known && result == vmloop.TVoid {
				f.errorf(dst.pos, "%s: %s returns nothing; write _ as the destination", name, calleeName)
				ok = false
			} else if known && !f.check(d, result, dst, name, "the destination of "+calleeName) {
				ok = false
			}
		case vmloop.SPAWN:
			if !f.check(d, vmloop.TRef, dst, name, "the task handle destination") {
				ok = false
			}
		}
	}
	if op == vmloop.TAILCALL && known && result != f.ast.result {
		f.errorf(callee.pos, "tailcall: %s returns %s but %s returns %s", calleeName, result, f.ast.name, f.ast.result)
		ok = false
	}

	// Arguments.
	args := make([]callArg, len(argOps))
	for i, o := range argOps {
		a := callArg{o: o}
		var want vmloop.Type
		if known {
			want = params[i]
		}
		if lt := litType(o); lt != vmloop.TVoid {
			a.typ = lt
			if want != vmloop.TVoid {
				a.typ = want
			}
			if want != vmloop.TVoid && lt != want && !(want == vmloop.TF64 && lt == vmloop.TI64) {
				f.errorf(o.pos, "%s: argument %d of %s must be %s, got a %s literal", name, i+1, calleeName, want, litName(lt))
				ok = false
			}
		} else {
			r, good := f.reg(o, name)
			if !good {
				ok = false
				continue
			}
			a.reg, a.isR = r, true
			a.typ = r.typ
			if a.typ == vmloop.TVoid {
				a.typ = want
			}
			if !f.check(r, want, o, name, fmt.Sprintf("argument %d of %s", i+1, calleeName)) {
				ok = false
			}
		}
		args[i] = a
	}
	if !ok {
		return
	}
	n := len(args)
	from := func(start int) bool {
		for i, a := range args {
			if !a.isR || a.reg.idx != start+i {
				return false
			}
		}
		return true
	}
	win := func(base int) {
		x := fields{a: uint8(base), c: uint8(n), d: idx}
		if detach {
			x.b = vmloop.SpawnDetached // no handle, no register written
		}
		f.emit(op, x, nil)
	}

	// The arguments already form the window: no moves.
	switch {
	case op == vmloop.CALL && dst != nil && !discard && n >= 1 && from(d.idx):
		win(d.idx)
		return
	case (op == vmloop.SPAWN || op == vmloop.INTR) && dst != nil && !discard && from(d.idx) && d.idx+n <= vmloop.MaxRegs:
		win(d.idx)
		return
	case op == vmloop.INTR && discard && known && result == vmloop.TVoid && n >= 1 && from(args[0].reg.idx),
		detach && n >= 1 && from(args[0].reg.idx):
		// Nothing is written back (a void intrinsic, a detached spawn):
		// the arguments are the window.
		win(args[0].reg.idx)
		return
	case detach && n == 0 && f.frame > 0:
		win(0) // no arguments, nothing written: no register needed
		return
	case op == vmloop.TAILCALL && n >= 1 && from(args[0].reg.idx):
		win(args[0].reg.idx)
		return
	case op == vmloop.TAILCALL && n == 0 && f.frame > 0:
		win(0)
		return
	}

	// Moves into the hidden window at the top of the frame.
	w := f.frame
	size := max(n, 1)
	if w+size > vmloop.MaxRegs {
		f.errorf(ins.pos, "%s: the call window r%d..r%d runs past the %d-register frame; free some registers or use the window form", name, w, w+size-1, vmloop.MaxRegs)
		return
	}
	f.hidden = max(f.hidden, size)
	for i, a := range args {
		if a.isR {
			if a.typ == vmloop.TVoid {
				f.errorf(a.o.pos, "%s: cannot tell the type of %s (raw registers are untyped and %s's parameters are unknown); use a declared register or the window form", name, a.o.text, calleeName)
				return
			}
			f.mov(a.typ, w+i, a.reg.idx)
		} else if !f.loadConst(regRef{idx: w + i, typ: a.typ}, a.o, name) {
			return
		}
	}
	win(w)
	if dst == nil || discard {
		return
	}
	t := d.typ
	if t == vmloop.TVoid {
		switch {
		case op == vmloop.SPAWN:
			t = vmloop.TRef
		case known:
			t = result
		default:
			f.errorf(dst.pos, "%s: cannot tell the result type of %s into raw register %s; declare the destination or use the window form", name, calleeName, dst.text)
			return
		}
	}
	f.mov(t, d.idx, w)
}
