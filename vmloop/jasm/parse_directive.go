package jasm

import (
	"strconv"
	"strings"

	"github.com/jadevm/jade/vmloop"
)

func (p *parser) directive(t token, rest []token, line string) {
	at := p.at(t)
	needFunc := func() bool {
		if p.cur == nil {
			p.errorf(at, "%s outside a function: it belongs between .func and .end", t.text)
			return false
		}
		return true
	}
	noFunc := func() bool {
		if p.cur != nil {
			p.errorf(at, "%s inside function %s: program-level directives go outside .func ... .end", t.text, p.cur.name)
			return false
		}
		return true
	}
	switch t.text {
	case ".abi":
		if !noFunc() {
			return
		}
		if p.file.abi != nil {
			p.errorf(at, "duplicate .abi (first at line %d)", p.file.abiPos.line)
			return
		}
		if len(rest) != 1 || rest[0].kind != tFloat && rest[0].kind != tInt {
			p.errorf(at, ".abi takes a version major.minor, e.g. .abi 1.0")
			return
		}
		v, ok := parseVersion(rest[0].text)
		if !ok {
			p.errorf(p.at(rest[0]), "malformed ABI version %s: write major.minor, e.g. .abi 1.0", rest[0].text)
			return
		}
		p.file.abi, p.file.abiPos = &v, at
	case ".func":
		if p.cur != nil {
			p.errorf(p.cur.pos, "function %s has no .end: add .end before the .func at line %d", p.cur.name, p.line)
			p.cur = nil
		}
		p.funcHeader(at, rest, line)
	case ".end":
		if p.cur == nil {
			p.errorf(at, ".end without a matching .func")
			return
		}
		if len(rest) > 0 {
			p.errorf(p.at(rest[0]), "unexpected %s after .end", rest[0].describe())
		}
		p.cur.closed = true
		p.cur = nil
	case ".local":
		if !needFunc() {
			return
		}
		if len(rest) == 0 {
			p.errorf(at, ".local needs at least one name:type, e.g. .local n:i64, s:ref")
			return
		}
		decls, ok := p.regList(rest, line, false)
		if ok {
			p.cur.locals = append(p.cur.locals, decls...)
		}
	case ".regs":
		if !needFunc() {
			return
		}
		if len(rest) != 1 || rest[0].kind != tInt || rest[0].ival < 0 || rest[0].ival > vmloop.MaxRegs {
			p.errorf(at, ".regs takes the frame size, an integer 0..%d", vmloop.MaxRegs)
			return
		}
		if p.cur.regs >= 0 {
			p.errorf(at, "duplicate .regs in function %s", p.cur.name)
			return
		}
		p.cur.regs = int(rest[0].ival)
	case ".try":
		if !needFunc() {
			return
		}
		ops, ok := p.operands(rest, line, ".try")
		if !ok {
			return
		}
		if len(ops) != 4 {
			p.errorf(at, ".try takes 4 operands: .try start, end, handler, reg (three labels and a ref register), got %d", len(ops))
			return
		}
		p.cur.tries = append(p.cur.tries, tryDecl{pos: at, ops: ops})
	case ".import", ".kint", ".kflt", ".kstr", ".kbytes":
		if !noFunc() {
			return
		}
		if t.text == ".import" && p.moduleImport(at, rest) {
			return
		}
		ops, ok := p.operands(rest, line, t.text)
		if !ok {
			return
		}
		if len(ops) == 0 {
			p.errorf(at, "%s needs at least one value", t.text)
		}
		for _, o := range ops {
			p.file.pools = append(p.file.pools, poolDecl{dir: t.text, op: o})
		}
	case ".word":
		if !needFunc() {
			return
		}
		if len(rest) != 1 || rest[0].kind != tInt {
			p.errorf(at, ".word takes one integer, the raw 64-bit instruction word, e.g. .word 0x0000000000000001")
			return
		}
		o := &operand{kind: oInt, pos: p.at(rest[0]), text: rest[0].text, ival: rest[0].ival}
		p.cur.body = append(p.cur.body, bodyItem{ins: &instr{pos: at, mnem: ".word", ops: []*operand{o}, word: true}, pos: at})
	default:
		if p.d.full() {
			return
		}
		msg := "unknown directive " + t.text
		if s := closest(t.text, directives); s != "" {
			msg += " (did you mean " + s + "?)"
		}
		p.errorf(at, "%s", msg)
	}
}

func parseVersion(s string) (vmloop.Version, bool) {
	maj, min, ok := strings.Cut(s, ".")
	if !ok {
		return vmloop.Version{}, false
	}
	a, err1 := strconv.ParseUint(maj, 10, 16)
	b, err2 := strconv.ParseUint(min, 10, 16)
	if err1 != nil || err2 != nil {
		return vmloop.Version{}, false
	}
	return vmloop.Version{Major: uint16(a), Minor: uint16(b)}, true
}

// funcHeader parses NAME(params) [-> type].
func (p *parser) funcHeader(at pos, toks []token, line string) {
	f := &funcAST{pos: at, namePos: at, regs: -1, result: vmloop.TVoid, bad: true}
	p.cur = f
	p.file.funcs = append(p.file.funcs, f)
	if len(toks) == 0 {
		f.name = "?"
		p.errorf(at, ".func needs a name and parameters, e.g. .func main(args:ref) -> i64")
		return
	}
	nt := toks[0]
	f.namePos = p.at(nt)
	switch nt.kind {
	case tIdent:
		f.name = nt.text
		if msg := checkName(nt.text, "function"); msg != "" {
			p.errorf(f.namePos, "%s (quote unusual function names: .func \"%s\"(...))", msg, nt.text)
		}
	case tString:
		f.name = nt.sval
	default:
		f.name = "?"
		p.errorf(f.namePos, "expected a function name after .func, got %s", nt.describe())
		return
	}
	f.bad = false
	if len(toks) < 2 || toks[1].kind != tLParen {
		q := p.endPos(line)
		if len(toks) >= 2 {
			q = p.at(toks[1])
		}
		p.errorf(q, "expected '(' after the function name: .func %s(p:i64) -> i64", f.name)
		return
	}
	k := 2
	closeAt := -1
	for j := k; j < len(toks); j++ {
		if toks[j].kind == tRParen {
			closeAt = j
			break
		}
	}
	if closeAt < 0 {
		p.errorf(p.endPos(line), "missing ')' after the parameters of %s", f.name)
		return
	}
	if closeAt > k {
		decls, ok := p.regList(toks[k:closeAt], line, true)
		if !ok {
			return
		}
		f.params = decls
	}
	k = closeAt + 1
	if k < len(toks) {
		if toks[k].kind != tArrow {
			p.errorf(p.at(toks[k]), "expected '->' and a result type after the parameters, got %s", toks[k].describe())
			return
		}
		if k+1 >= len(toks) || toks[k+1].kind != tIdent {
			p.errorf(p.at(toks[k]), "expected a result type after '->': i64, f64, ref or void")
			return
		}
		rt, ok := vmloop.ParseType(toks[k+1].text)
		if !ok {
			p.errorf(p.at(toks[k+1]), "unknown result type %s: use i64, f64, ref or void", toks[k+1].text)
			return
		}
		f.result = rt
		if k+2 < len(toks) {
			p.errorf(p.at(toks[k+2]), "unexpected %s after the result type", toks[k+2].describe())
		}
	}
}

// regList parses name:type, name:type, ... (params may be a bare type).
func (p *parser) regList(toks []token, line string, params bool) ([]regDecl, bool) {
	var out []regDecl
	k := 0
	for k < len(toks) {
		t := toks[k]
		if t.kind != tIdent {
			p.errorf(p.at(t), "expected name:type, got %s", t.describe())
			return nil, false
		}
		var d regDecl
		d.pos = p.at(t)
		if k+1 < len(toks) && toks[k+1].kind == tColon {
			if k+2 >= len(toks) || toks[k+2].kind != tIdent {
				p.errorf(p.at(toks[k+1]), "expected a type after %s: (i64, f64 or ref)", t.text)
				return nil, false
			}
			d.name = t.text
			typ, ok := vmloop.ParseType(toks[k+2].text)
			if !ok || typ == vmloop.TVoid {
				p.errorf(p.at(toks[k+2]), "unknown register type %s: use i64, f64 or ref", toks[k+2].text)
				return nil, false
			}
			d.typ = typ
			if msg := checkName(t.text, "register"); msg != "" {
				p.errorf(d.pos, "%s", msg)
				return nil, false
			}
			k += 3
		} else if typ, ok := vmloop.ParseType(t.text); ok && typ != vmloop.TVoid && params {
			d.typ = typ // unnamed parameter
			k++
		} else {
			p.errorf(d.pos, "%s needs a type: write %s:i64, %s:f64 or %s:ref", t.text, t.text, t.text, t.text)
			return nil, false
		}
		out = append(out, d)
		if k < len(toks) {
			if toks[k].kind != tComma {
				p.errorf(p.at(toks[k]), "expected ',' between declarations, got %s", toks[k].describe())
				return nil, false
			}
			k++
			if k == len(toks) {
				p.errorf(p.endPos(line), "missing declaration after ','")
				return nil, false
			}
		}
	}
	return out, true
}

// rawReg reports whether s is a raw register name rN and returns N (which
// may be out of range).
func rawReg(s string) (int, bool) {
	if len(s) < 2 || s[0] != 'r' {
		return 0, false
	}
	n := 0
	for i := 1; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, false
		}
		if n < 1<<20 {
			n = n*10 + int(s[i]-'0')
		}
	}
	return n, true
}
