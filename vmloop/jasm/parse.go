package jasm

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jadevm/jade/vmloop"
)

// The parser turns source lines into a syntax tree (fileAST). It knows the
// shape of directives and operands but not what a mnemonic means: that is
// the assembler's job, driven by the ISA table.

type opKind uint8

const (
	oIdent  opKind = iota // register, label, function, intrinsic, type, _, inf, nan
	oInt                  // integer literal
	oFloat                // float literal
	oString               // string literal
	oIndex                // #N
	oWindow               // (base, count)
)

type operand struct {
	kind  opKind
	pos   pos
	text  string
	ival  int64
	fval  float64
	sval  string
	base  *operand // oWindow
	count *operand // oWindow
}

func (o *operand) describe() string {
	switch o.kind {
	case oIdent:
		return o.text
	case oInt:
		return "integer " + o.text
	case oFloat:
		return "float " + o.text
	case oString:
		return "string " + o.text
	case oIndex:
		return "pool index " + o.text
	default:
		return "window " + o.text
	}
}

type instr struct {
	pos  pos // of the mnemonic
	mnem string
	ops  []*operand
	word bool // .word: ops[0] is the raw instruction word
}

type bodyItem struct {
	label string // a label definition, or
	ins   *instr // an instruction
	pos   pos
}

type regDecl struct {
	name string // "" for an unnamed parameter
	typ  vmloop.Type
	pos  pos
}

type tryDecl struct {
	pos pos
	ops []*operand
}

type funcAST struct {
	pos     pos
	name    string
	namePos pos
	params  []regDecl
	result  vmloop.Type
	locals  []regDecl
	regs    int // .regs N, or -1
	body    []bodyItem
	tries   []tryDecl
	closed  bool
	bad     bool // the header did not parse; not a duplicate of anything
}

type poolDecl struct {
	dir string // .import .kint .kflt .kstr .kbytes
	op  *operand
}

type fileAST struct {
	abi     *vmloop.Version
	abiPos  pos
	funcs   []*funcAST
	pools   []poolDecl
	modules []moduleDecl // .import "path" as name, in source order
}

var directives = []string{".abi", ".func", ".end", ".local", ".regs", ".try", ".import", ".kint", ".kflt", ".kstr", ".kbytes", ".word"}

type parser struct {
	d    *diag
	file fileAST
	cur  *funcAST
	line int
}

// parse parses src line by line. It stops once the diagnostics are full
// (diag.full): a file of errors is not parsed to its end, and Assemble
// reports what it has (the first maxErrors, then "too many errors").
func parse(src []byte, d *diag) *fileAST {
	p := &parser{d: d}
	rest := src
	for more := true; more; {
		if d.full() {
			return &p.file
		}
		var line []byte
		line, rest, more = bytes.Cut(rest, []byte{'\n'})
		p.line++
		p.parseLine(string(line)) // copied line by line: what is not parsed is not copied
	}
	if p.cur != nil {
		p.errorf(p.cur.pos, "function %s has no .end: add .end after its last instruction", p.cur.name)
	}
	return &p.file
}

func (p *parser) errorf(at pos, format string, args ...any) { p.d.errorf(at, format, args...) }

func (p *parser) at(t token) pos { return pos{p.line, t.col} }

func (p *parser) endPos(line string) pos { return pos{p.line, len(line) + 1} }

func (p *parser) parseLine(line string) {
	toks, ecol, emsg := lexLine(line)
	if emsg != "" {
		p.errorf(pos{p.line, ecol}, "%s", emsg)
		return
	}
	k := 0
	for k+1 < len(toks) && toks[k].kind == tIdent && toks[k+1].kind == tColon {
		t := toks[k]
		if p.cur == nil {
			p.errorf(p.at(t), "label %s outside a function: labels belong between .func and .end", t.text)
		} else if msg := checkName(t.text, "label"); msg != "" {
			p.errorf(p.at(t), "%s", msg)
		} else {
			p.cur.body = append(p.cur.body, bodyItem{label: t.text, pos: p.at(t)})
		}
		k += 2
	}
	if k == len(toks) {
		return
	}
	t := toks[k]
	rest := toks[k+1:]
	switch t.kind {
	case tDirective:
		p.directive(t, rest, line)
	case tIdent:
		if p.cur == nil {
			p.errorf(p.at(t), "instruction %s outside a function: put it between .func and .end", t.text)
			return
		}
		if strings.Contains(t.text, ".") {
			p.errorf(p.at(t), "%s is not a mnemonic (intrinsics are called with intr dst, %s, args...)", t.text, t.text)
			return
		}
		if msg := unknownMnemonic(t.text); msg != "" {
			p.errorf(p.at(t), "%s", msg)
			return
		}
		ops, ok := p.operands(rest, line, t.text)
		if !ok {
			return
		}
		p.cur.body = append(p.cur.body, bodyItem{ins: &instr{pos: p.at(t), mnem: t.text, ops: ops}, pos: p.at(t)})
	default:
		p.errorf(p.at(t), "expected a label, directive or instruction, got %s", t.describe())
	}
}

// operands parses a comma-separated operand list.
func (p *parser) operands(toks []token, line, what string) ([]*operand, bool) {
	var ops []*operand
	k := 0
	for k < len(toks) {
		o, n, ok := p.operand(toks[k:], line)
		if !ok {
			return nil, false
		}
		ops = append(ops, o)
		k += n
		if k == len(toks) {
			break
		}
		if toks[k].kind != tComma {
			p.errorf(p.at(toks[k]), "expected ',' between operands of %s, got %s", what, toks[k].describe())
			return nil, false
		}
		k++
		if k == len(toks) {
			p.errorf(p.endPos(line), "missing operand after ',' in %s", what)
			return nil, false
		}
	}
	return ops, true
}

// operand parses one operand at the start of toks and returns the number of
// tokens used.
func (p *parser) operand(toks []token, line string) (*operand, int, bool) {
	t := toks[0]
	at := p.at(t)
	switch t.kind {
	case tIdent:
		if t.text == "f64bits" && len(toks) > 1 && toks[1].kind == tLParen {
			if len(toks) < 4 || toks[2].kind != tInt || toks[3].kind != tRParen {
				p.errorf(at, "malformed f64bits literal: write f64bits(0x7ff8000000000001) with the 64-bit pattern in hex")
				return nil, 0, false
			}
			return &operand{kind: oFloat, pos: at, text: "f64bits(" + toks[2].text + ")",
				fval: math.Float64frombits(uint64(toks[2].ival))}, 4, true
		}
		return &operand{kind: oIdent, pos: at, text: t.text}, 1, true
	case tInt:
		return &operand{kind: oInt, pos: at, text: t.text, ival: t.ival}, 1, true
	case tFloat:
		return &operand{kind: oFloat, pos: at, text: t.text, fval: t.fval}, 1, true
	case tString:
		return &operand{kind: oString, pos: at, text: t.text, sval: t.sval}, 1, true
	case tIndex:
		return &operand{kind: oIndex, pos: at, text: t.text, ival: t.ival}, 1, true
	case tLParen:
		// (base, count)
		if len(toks) >= 5 && toks[2].kind == tComma && toks[4].kind == tRParen &&
			(toks[1].kind == tIdent) && toks[3].kind == tInt {
			b := &operand{kind: oIdent, pos: p.at(toks[1]), text: toks[1].text}
			c := &operand{kind: oInt, pos: p.at(toks[3]), text: toks[3].text, ival: toks[3].ival}
			return &operand{kind: oWindow, pos: at, text: "(" + b.text + ", " + c.text + ")", base: b, count: c}, 5, true
		}
		p.errorf(at, "malformed window: write (base, count), e.g. (r3, 2), with a register and an argument count")
		return nil, 0, false
	case tComma:
		p.errorf(at, "missing operand before ','")
	default:
		p.errorf(at, "expected an operand, got %s", t.describe())
	}
	return nil, 0, false
}

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

var reservedNames = map[string]bool{
	"_": true, "i64": true, "f64": true, "ref": true, "void": true,
	"inf": true, "nan": true, "f64bits": true,
}

// checkName returns a message when s cannot name a register, label or
// function.
func checkName(s, what string) string {
	if strings.Contains(s, ".") {
		return fmt.Sprintf("%s name %s must not contain '.' (dots are for intrinsic names)", what, s)
	}
	if _, ok := rawReg(s); ok {
		return fmt.Sprintf("%s name %s is reserved: r0..r255 name raw registers", what, s)
	}
	if reservedNames[s] {
		return fmt.Sprintf("%s name %s is reserved", what, s)
	}
	return ""
}

// isName reports whether s is usable as a bare register, label or function
// name.
func isName(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentChar(s[i]) {
			return false
		}
	}
	return checkName(s, "") == ""
}

// isIntrName reports whether s is a well-formed family.name intrinsic name.
func isIntrName(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || !isLetter(p[0]) {
			return false
		}
		for i := 1; i < len(p); i++ {
			if !isIdentChar(p[i]) {
				return false
			}
		}
	}
	return true
}

// closest returns the candidate nearest to s by edit distance, or "" when
// none is close enough to be a plausible typo.
func closest(s string, cands []string) string {
	limit := max(1, len(s)/3)
	best, bestD := "", limit+1
	for _, c := range cands {
		if d := editDistance(s, c); d < bestD && d < len(s) && d < len(c) {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and transpositions of neighbours cost 1.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 20
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
