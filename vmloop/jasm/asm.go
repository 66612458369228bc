package jasm

import (
	"math"

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
