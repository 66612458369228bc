package jasm

import (
	"fmt"
	"math"
	"strings"

	"github.com/jadevm/jade/vmloop"
)

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
		if ins.mnem == "spawn" && len(ins.ops) == 3 && ins.ops[0].isDiscard() && ins.ops[1].kind == oWindow {
			// spawn _, (base, n), fn: the window form, detached
			f.genericB(&instr{mnem: ins.mnem, pos: ins.pos, ops: ins.ops[1:]}, vmloop.SPAWN, vmloop.SpawnDetached)
			return
		}
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
func (f *fnState) generic(ins *instr, op vmloop.Op) { f.genericB(ins, op, 0) }

// genericB is generic with field B set to b where no operand sets it (a
// detached spawn's window form).
func (f *fnState) genericB(ins *instr, op vmloop.Op, b uint8) {
	info, _ := op.Info()
	if len(ins.ops) != len(info.Operands) {
		at := ins.pos
		if len(ins.ops) > len(info.Operands) {
			at = ins.ops[len(info.Operands)].pos
		}
		f.errorf(at, "%s takes %d operand(s), got %d: %s", info.Name, len(info.Operands), len(ins.ops), signature(op))
		return
	}
	x := fields{b: b}
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
