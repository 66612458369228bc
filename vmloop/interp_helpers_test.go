package vmloop

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Test helpers of the interpreter tests (prefixed it). Programs are written
// in a tiny line assembler over Encode (itAsm) and always pass Verify.

// itAsm assembles a function body: one instruction per line or per ';',
// "label:" defines a label, "#" starts a comment. Operands follow the ISA
// table's operand order: registers "rN", immediates and indices as
// numbers, targets as labels or numbers, element types as i64/f64/ref. A
// window operand (call, tailcall, spawn, intr) takes two tokens: the base
// register and the argument count. It returns the code and the labels.
func itAsm(src string) ([]Instr, map[string]int) {
	type line struct {
		op   Op
		args []string
		text string
	}
	var lines []line
	labels := map[string]int{}
	for _, raw := range strings.FieldsFunc(src, func(r rune) bool { return r == '\n' || r == ';' }) {
		if i := strings.IndexByte(raw, '#'); i >= 0 {
			raw = raw[:i]
		}
		s := strings.TrimSpace(raw)
		for {
			i := strings.IndexByte(s, ':')
			if i < 0 || strings.ContainsAny(s[:i], " \t,") {
				break
			}
			labels[s[:i]] = len(lines)
			s = strings.TrimSpace(s[i+1:])
		}
		if s == "" {
			continue
		}
		name, rest, _ := strings.Cut(s, " ")
		op, ok := OpByName(name)
		if !ok {
			panic("itAsm: unknown mnemonic " + name)
		}
		var args []string
		for _, a := range strings.Split(rest, ",") {
			if a = strings.TrimSpace(a); a != "" {
				args = append(args, a)
			}
		}
		lines = append(lines, line{op, args, s})
	}
	code := make([]Instr, len(lines))
	for pc, l := range lines {
		info, _ := l.op.Info()
		var a, b, c uint8
		var d int32
		num := func(s string) int64 {
			if t, ok := labels[s]; ok {
				return int64(t)
			}
			n, err := strconv.ParseInt(strings.TrimPrefix(s, "r"), 0, 64)
			if err != nil {
				panic(fmt.Sprintf("itAsm: %q: bad operand %q", l.text, s))
			}
			return n
		}
		set := func(f Field, v int64) {
			switch f {
			case FA:
				a = uint8(v)
			case FB:
				b = uint8(v)
			case FC:
				c = uint8(v)
			case FD:
				d = int32(v)
			case FBC:
				b, c = uint8(v), uint8(uint16(v)>>8)
			case FD0:
				d = d&^0xff | int32(uint8(v))
			case FD1:
				d = d&^0xff00 | int32(uint8(v))<<8
			}
		}
		k := 0
		next := func() string {
			if k >= len(l.args) {
				panic(fmt.Sprintf("itAsm: %q: too few operands", l.text))
			}
			k++
			return l.args[k-1]
		}
		for _, o := range info.Operands {
			switch o.Kind {
			case OWindow:
				set(FA, num(next()))
				set(FC, num(next()))
			case OElemType:
				t, ok := ParseType(next())
				if !ok {
					panic("itAsm: bad element type in " + l.text)
				}
				set(FC, int64(t))
			default:
				set(o.Field, num(next()))
			}
		}
		if k != len(l.args) {
			panic(fmt.Sprintf("itAsm: %q: too many operands", l.text))
		}
		code[pc] = Encode(l.op, a, b, c, d)
	}
	return code, labels
}

// itFn builds a function from a signature "(i64,ref)->f64" and a body.
// Handlers are given as "start,end,target,rN" with labels.
func itFn(name, sig string, nregs int, body string, handlers ...string) Function {
	code, labels := itAsm(body)
	open, close := strings.IndexByte(sig, '('), strings.IndexByte(sig, ')')
	var params []Type
	for _, s := range strings.Split(sig[open+1:close], ",") {
		if s = strings.TrimSpace(s); s != "" {
			t, ok := ParseType(s)
			if !ok {
				panic("itFn: bad type " + s)
			}
			params = append(params, t)
		}
	}
	res, ok := ParseType(strings.TrimSpace(strings.TrimPrefix(sig[close+1:], "->")))
	if !ok {
		panic("itFn: bad result in " + sig)
	}
	f := Function{Name: name, Params: params, Result: res, NRegs: nregs, Code: code}
	for _, h := range handlers {
		parts := strings.Split(h, ",")
		pcOf := func(s string) uint32 {
			s = strings.TrimSpace(s)
			if t, ok := labels[s]; ok {
				return uint32(t)
			}
			n, err := strconv.Atoi(s)
			if err != nil {
				panic("itFn: bad handler label " + s)
			}
			return uint32(n)
		}
		reg, _ := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(parts[3]), "r"))
		f.Handlers = append(f.Handlers, Handler{Start: pcOf(parts[0]), End: pcOf(parts[1]), Target: pcOf(parts[2]), Reg: uint8(reg)})
	}
	return f
}

// itProg verifies a program built from fns (the first is the entry).
func itProg(t testing.TB, p *Program, fns ...Function) *Program {
	t.Helper()
	if p == nil {
		p = &Program{}
	}
	p.ABI = ABI
	p.Funcs = fns
	require.NoError(t, Verify(p, nil), "program rejected")
	itNoteOps(p)
	return p
}

// itStart makes an Exec for function name of p.
func itStart(t testing.TB, p *Program, name string, args ...Value) *Exec {
	t.Helper()
	fi := p.FuncIndex(name)
	if fi < 0 {
		t.Fatalf("no function %q", name)
	}
	e, err := NewExec(p, fi, args, DefaultLimits, 7)
	require.NoError(t, err)
	return e
}

// itRun runs e to its end through any number of preemptions; an intrinsic
// request fails the test.
func itRun(t testing.TB, e *Exec, budget int64) Signal {
	t.Helper()
	for i := 0; ; i++ {
		sig := e.Run(budget)
		switch sig {
		case SigPreempted:
			if i > 10_000_000 {
				t.Fatalf("still running after %d slices", i)
			}
			continue
		case SigIntrinsic:
			t.Fatalf("unexpected intrinsic request %+v", *e.Request())
		}
		return sig
	}
}

// itCall runs function name of a one-function program with args and
// returns the signal and the exec.
func itCall(t testing.TB, p *Program, name string, args ...Value) (Signal, *Exec) {
	t.Helper()
	e := itStart(t, p, name, args...)
	return itRun(t, e, 1<<40), e
}

// Opcode coverage: every program the tests verify records its opcodes, and
// a full test run fails if an opcode was never exercised.
var (
	itOpsMu sync.Mutex
	itOps   [NumOps]bool
)

func itNoteOps(p *Program) {
	itOpsMu.Lock()
	defer itOpsMu.Unlock()
	for _, f := range p.Funcs {
		for _, ins := range f.Code {
			itOps[ins.Op()] = true
		}
	}
}
