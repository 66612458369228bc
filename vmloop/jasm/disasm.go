package jasm

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/jadevm/jade/vmloop"
)

// Options control Fprint.
type Options struct {
	// Annotate adds comments: the pc of every instruction and, when Verify
	// has filled Function.Blocks, one line per basic block with its cost.
	// Annotated text still assembles to the same program.
	Annotate bool
	// Lines adds each instruction's source position from the debug
	// information (Program.File and Function.Lines), as file:line, to its
	// comment; with Annotate the pc and the line stand side by side.
	Lines bool
}

// sourcePos formats a source position for a comment: "file:line", or
// "line N" when the program has no file name. A file name that could end
// the comment early (a newline) is quoted.
func sourcePos(file string, line int) string {
	if file == "" {
		return "line " + strconv.Itoa(line)
	}
	if strings.ContainsAny(file, "\r\n") {
		file = strconv.Quote(file)
	}
	return file + ":" + strconv.Itoa(line)
}

// Disassemble prints p as Jade assembly. Assemble turns the text back into
// a program with the same functions (names, parameters, results, frame
// sizes, code words and handlers), pools and imports. It uses the debug
// names of registers and labels when present (r0.., L12 otherwise) and
// only the exact ISA mnemonics, with calls in their window form.
//
// Instruction words the assembler could not reproduce from a mnemonic
// (undefined opcodes, stray bits, targets or indices out of range) are
// printed as .word directives, so the code round-trips for any program.
func Disassemble(p *vmloop.Program) string {
	var sb strings.Builder
	_ = Fprint(&sb, p, Options{})
	return sb.String()
}

// Fprint writes the disassembly of p to w.
func Fprint(w io.Writer, p *vmloop.Program, opt Options) error {
	if p == nil {
		return nil
	}
	pr := newPrinter(p, opt)
	pr.program()
	_, err := io.WriteString(w, pr.sb.String())
	return err
}

type printer struct {
	p   *vmloop.Program
	opt Options
	sb  strings.Builder

	funcRef []string // how each function index is written
	intrRef []string
	kintRef []string
	kfltRef []string
	kstrRef []string
	kbRef   []string

	// first uses, in code order, of pool entries written as literals
	useInt  []int
	useFlt  []int
	useStr  []int
	useB    []int
	useIntr []int
}

func newPrinter(p *vmloop.Program, opt Options) *printer {
	pr := &printer{p: p, opt: opt}
	seen := map[string]bool{}
	for i := range p.Funcs {
		n := p.Funcs[i].Name
		switch {
		case seen[n]:
			pr.funcRef = append(pr.funcRef, "#"+strconv.Itoa(i))
		case isName(n):
			pr.funcRef = append(pr.funcRef, n)
		default:
			pr.funcRef = append(pr.funcRef, quote(n))
		}
		seen[n] = true
	}
	seen = map[string]bool{}
	for i, im := range p.Intrinsics {
		switch {
		case seen[im.Name]:
			pr.intrRef = append(pr.intrRef, "#"+strconv.Itoa(i))
		case isIntrName(im.Name):
			pr.intrRef = append(pr.intrRef, im.Name)
		default:
			pr.intrRef = append(pr.intrRef, quote(im.Name))
		}
		seen[im.Name] = true
	}
	seenI := map[int64]bool{}
	for i, v := range p.KInt {
		if seenI[v] {
			pr.kintRef = append(pr.kintRef, "#"+strconv.Itoa(i))
		} else {
			pr.kintRef = append(pr.kintRef, strconv.FormatInt(v, 10))
		}
		seenI[v] = true
	}
	seenF := map[uint64]bool{}
	for i, v := range p.KFlt {
		b := math.Float64bits(v)
		if seenF[b] {
			pr.kfltRef = append(pr.kfltRef, "#"+strconv.Itoa(i))
		} else {
			pr.kfltRef = append(pr.kfltRef, formatFloat(v))
		}
		seenF[b] = true
	}
	seen = map[string]bool{}
	for i, v := range p.KStr {
		if seen[v] {
			pr.kstrRef = append(pr.kstrRef, "#"+strconv.Itoa(i))
		} else {
			pr.kstrRef = append(pr.kstrRef, quote(v))
		}
		seen[v] = true
	}
	seen = map[string]bool{}
	for i, v := range p.KBytes {
		if seen[string(v)] {
			pr.kbRef = append(pr.kbRef, "#"+strconv.Itoa(i))
		} else {
			pr.kbRef = append(pr.kbRef, quote(string(v)))
		}
		seen[string(v)] = true
	}
	return pr
}

func (pr *printer) printf(format string, args ...any) { fmt.Fprintf(&pr.sb, format, args...) }

func (pr *printer) program() {
	p := pr.p
	// Decode every function first: which pool entries the code names as
	// literals decides whether the pools must be spelled out.
	fps := make([]*funcPrinter, len(p.Funcs))
	for i := range p.Funcs {
		fps[i] = pr.newFunc(&p.Funcs[i])
	}
	pr.printf(".abi %d.%d\n", p.ABI.Major, p.ABI.Minor)
	if !natural(len(p.Intrinsics), pr.useIntr) {
		pr.printf("\n")
		for i, im := range p.Intrinsics {
			ref := im.Name
			if !isIntrName(ref) {
				ref = quote(ref)
			}
			pr.printf(".import %-30s ; #%d\n", ref, i)
		}
	}
	if !natural(len(p.KInt), pr.useInt) {
		pr.printf("\n")
		for i, v := range p.KInt {
			pr.printf(".kint %-20d ; #%d\n", v, i)
		}
	}
	if !natural(len(p.KFlt), pr.useFlt) {
		pr.printf("\n")
		for i, v := range p.KFlt {
			pr.printf(".kflt %-20s ; #%d\n", formatFloat(v), i)
		}
	}
	if !natural(len(p.KStr), pr.useStr) {
		pr.printf("\n")
		for i, v := range p.KStr {
			pr.printf(".kstr %s ; #%d\n", quote(v), i)
		}
	}
	if !natural(len(p.KBytes), pr.useB) {
		pr.printf("\n")
		for i, v := range p.KBytes {
			pr.printf(".kbytes %s ; #%d\n", quote(string(v)), i)
		}
	}
	for _, fp := range fps {
		pr.printf("\n")
		fp.print()
	}
}

// natural reports whether a pool of n entries is exactly what the
// assembler builds from the literals alone: every entry used, in order of
// first use, no duplicates (uses lists the indices in code order).
func natural(n int, uses []int) bool {
	seen := map[int]bool{}
	next := 0
	for _, i := range uses {
		if seen[i] {
			continue
		}
		if i != next {
			return false
		}
		seen[i] = true
		next++
	}
	return next == n
}

// quote writes s as a Jade string literal.
func quote(s string) string { return vmloop.QuoteString(s) }

// formatFloat writes v so that the lexer reads back the same bits.
func formatFloat(v float64) string {
	b := math.Float64bits(v)
	switch {
	case b == math.Float64bits(math.NaN()):
		return "nan"
	case v != v:
		return fmt.Sprintf("f64bits(0x%016x)", b)
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}
