package jasm

import (
	"bytes"
	"math"
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

// isDiscard reports whether o is _, the destination that keeps no result.
func (o *operand) isDiscard() bool { return o.kind == oIdent && o.text == "_" }

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
