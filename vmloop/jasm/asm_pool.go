package jasm

import (
	"math"
	"sort"
	"strings"

	"github.com/jadevm/jade/vmloop"
)

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
