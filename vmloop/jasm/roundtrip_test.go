package jasm

import (
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
)

// diffPrograms compares the non-debug fields of two programs and describes
// the first difference ("" when equal). Floats compare by bits.
func diffPrograms(p, q *vmloop.Program) string {
	if p.ABI != q.ABI {
		return fmt.Sprintf("ABI %v != %v", p.ABI, q.ABI)
	}
	if !reflect.DeepEqual(nilIfEmpty(p.KInt), nilIfEmpty(q.KInt)) {
		return fmt.Sprintf("KInt %v != %v", p.KInt, q.KInt)
	}
	if len(p.KFlt) != len(q.KFlt) {
		return fmt.Sprintf("KFlt %v != %v", p.KFlt, q.KFlt)
	}
	for i := range p.KFlt {
		if math.Float64bits(p.KFlt[i]) != math.Float64bits(q.KFlt[i]) {
			return fmt.Sprintf("KFlt[%d] %v != %v", i, p.KFlt[i], q.KFlt[i])
		}
	}
	if !reflect.DeepEqual(nilIfEmpty(p.KStr), nilIfEmpty(q.KStr)) {
		return fmt.Sprintf("KStr %q != %q", p.KStr, q.KStr)
	}
	if !reflect.DeepEqual(nilIfEmpty(p.KBytes), nilIfEmpty(q.KBytes)) {
		return fmt.Sprintf("KBytes %q != %q", p.KBytes, q.KBytes)
	}
	if len(p.Intrinsics) != len(q.Intrinsics) {
		return fmt.Sprintf("imports %v != %v", p.Intrinsics, q.Intrinsics)
	}
	for i := range p.Intrinsics {
		if p.Intrinsics[i].Name != q.Intrinsics[i].Name {
			return fmt.Sprintf("import %d %q != %q", i, p.Intrinsics[i].Name, q.Intrinsics[i].Name)
		}
	}
	if len(p.Funcs) != len(q.Funcs) {
		return fmt.Sprintf("%d functions != %d", len(p.Funcs), len(q.Funcs))
	}
	for i := range p.Funcs {
		f, g := &p.Funcs[i], &q.Funcs[i]
		switch {
		case f.Name != g.Name:
			return fmt.Sprintf("func %d name %q != %q", i, f.Name, g.Name)
		case !reflect.DeepEqual(nilIfEmpty(f.Params), nilIfEmpty(g.Params)):
			return fmt.Sprintf("func %s params %v != %v", f.Name, f.Params, g.Params)
		case f.Result != g.Result:
			return fmt.Sprintf("func %s result %v != %v", f.Name, f.Result, g.Result)
		case f.NRegs != g.NRegs:
			return fmt.Sprintf("func %s NRegs %d != %d", f.Name, f.NRegs, g.NRegs)
		case !reflect.DeepEqual(nilIfEmpty(f.Handlers), nilIfEmpty(g.Handlers)):
			return fmt.Sprintf("func %s handlers %+v != %+v", f.Name, f.Handlers, g.Handlers)
		case len(f.Code) != len(g.Code):
			return fmt.Sprintf("func %s: %d instructions != %d", f.Name, len(f.Code), len(g.Code))
		}
		for pc := range f.Code {
			if f.Code[pc] != g.Code[pc] {
				return fmt.Sprintf("func %s pc %d: %#016x != %#016x", f.Name, pc, uint64(f.Code[pc]), uint64(g.Code[pc]))
			}
		}
	}
	return ""
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// roundTrip checks Assemble(Disassemble(p)) == p and that a second round
// prints the same text. It returns the first text.
func roundTrip(t testing.TB, name string, p *vmloop.Program) string {
	t.Helper()
	text := Disassemble(p)
	q, err := Assemble(name+".dis", []byte(text))
	require.NoError(t, err, "%s: disassembly does not assemble\n%s", name, text)
	if d := diffPrograms(p, q); d != "" {
		t.Fatalf("%s: round trip changed the program: %s\n%s", name, d, text)
	}
	if text2 := Disassemble(q); text2 != text {
		t.Fatalf("%s: disassembly is not stable:\nfirst:\n%s\nsecond:\n%s", name, text, text2)
	}
	return text
}

func TestRoundTripExamples(t *testing.T) {
	for name, src := range examplePrograms(t) {
		p := mustAssemble(t, name, src)
		roundTrip(t, name, p)
		// Debug names survive too.
		q, _ := Assemble(name, []byte(Disassemble(p)))
		for i := range p.Funcs {
			if !reflect.DeepEqual(p.Funcs[i].RegNames, q.Funcs[i].RegNames) ||
				!reflect.DeepEqual(p.Funcs[i].RegTypes, q.Funcs[i].RegTypes) {
				t.Errorf("%s: %s: register debug info changed: %q %v -> %q %v", name, p.Funcs[i].Name,
					p.Funcs[i].RegNames, p.Funcs[i].RegTypes, q.Funcs[i].RegNames, q.Funcs[i].RegTypes)
			}
		}
		// Annotated output of a verified program assembles to the same.
		require.NoError(t, vmloop.Verify(p, nil), "%s", name)
		var sb strings.Builder
		require.NoError(t, Fprint(&sb, p, Options{Annotate: true}))
		q, err := Assemble(name+".annotated", []byte(sb.String()))
		require.NoError(t, err, "%s: annotated disassembly\n%s", name, sb.String())
		if d := diffPrograms(p, q); d != "" {
			t.Fatalf("%s: annotated round trip: %s", name, d)
		}
	}
}

// randomProgram builds a program from the ISA table: every opcode may
// appear with operands in range, pools and imports with duplicates and
// unused entries, odd names, random debug information, handlers, and raw
// words the assembler can only reproduce through .word.
func randomProgram(r *rand.Rand) *vmloop.Program {
	p := &vmloop.Program{ABI: vmloop.Version{Major: uint16(r.Intn(3)), Minor: uint16(r.Intn(20))}}
	ints := []int64{0, 1, -1, math.MaxInt64, math.MinInt64, 1 << 40, 42}
	for n := r.Intn(5); n > 0; n-- {
		p.KInt = append(p.KInt, ints[r.Intn(len(ints))])
	}
	flts := []float64{0, math.Copysign(0, -1), 1.5, -2.25e-300, math.Inf(1), math.Inf(-1), math.NaN(),
		math.Float64frombits(0x7ff0000000000001), math.Float64frombits(0xfff8000000000000), 1e21, 123456789, math.SmallestNonzeroFloat64}
	for n := r.Intn(5); n > 0; n-- {
		p.KFlt = append(p.KFlt, flts[r.Intn(len(flts))])
	}
	strs := []string{"", "boom", "a\nb", "quote\"d", "tab\t", "\x00\xff\x80", "héllo", "日本", ";#,()"}
	for n := r.Intn(5); n > 0; n-- {
		p.KStr = append(p.KStr, strs[r.Intn(len(strs))])
	}
	for n := r.Intn(4); n > 0; n-- {
		p.KBytes = append(p.KBytes, []byte(strs[r.Intn(len(strs))]))
	}
	imps := []string{"io.print_i64", "io.print_str", "task.id", "host.thing", "a.b.c", "not well formed", "", "task.spawn"}
	for n := r.Intn(4); n > 0; n-- {
		p.Intrinsics = append(p.Intrinsics, vmloop.Import{Name: imps[r.Intn(len(imps))]})
	}
	names := []string{"main", "f", "g_1", "r5", "with space", "", "_", "x.y", "nop"}
	nf := 1 + r.Intn(4)
	used := map[string]bool{}
	types := []vmloop.Type{vmloop.TI64, vmloop.TF64, vmloop.TRef}
	for i := 0; i < nf; i++ {
		name := fmt.Sprintf("fn%d", i)
		if c := names[r.Intn(len(names))]; r.Intn(2) == 0 && !used[c] {
			name = c
		}
		used[name] = true
		fn := vmloop.Function{Name: name, Result: vmloop.Type(r.Intn(4))}
		for n := r.Intn(4); n > 0; n-- {
			fn.Params = append(fn.Params, types[r.Intn(3)])
		}
		fn.NRegs = max(len(fn.Params)+r.Intn(8), 1)
		if r.Intn(3) == 0 {
			fn.NRegs = len(fn.Params) + r.Intn(250-len(fn.Params))
			fn.NRegs = max(fn.NRegs, 1)
		}
		if r.Intn(2) == 0 {
			fn.RegNames = make([]string, fn.NRegs)
			fn.RegTypes = make([]vmloop.Type, fn.NRegs)
			for j := range fn.RegNames {
				switch r.Intn(6) {
				case 0:
				case 1:
					fn.RegNames[j] = "dup"
				case 2:
					fn.RegNames[j] = "r9"
				default:
					fn.RegNames[j] = fmt.Sprintf("v%d", j)
				}
				fn.RegTypes[j] = vmloop.Type(r.Intn(4))
			}
		}
		n := 1 + r.Intn(30)
		for pc := 0; pc < n; pc++ {
			fn.Code = append(fn.Code, randomInstr(r, p, &fn, nf, n))
		}
		if r.Intn(2) == 0 {
			fn.Labels = map[int]string{}
			for k := r.Intn(4); k > 0; k-- {
				fn.Labels[r.Intn(n+1)] = []string{"loop", "L3", "done", "r1", "bad name"}[r.Intn(5)]
			}
		}
		// Handlers: an inner range first, then possibly one enclosing it,
		// then a disjoint one.
		if n >= 4 && r.Intn(2) == 0 {
			s := 1 + r.Intn(n-3)
			e := s + 1 + r.Intn(n-s-2)
			fn.Handlers = append(fn.Handlers, vmloop.Handler{Start: uint32(s), End: uint32(e), Target: 0, Reg: uint8(r.Intn(fn.NRegs))})
			if r.Intn(2) == 0 {
				fn.Handlers = append(fn.Handlers, vmloop.Handler{Start: uint32(s - 1), End: uint32(e + 1), Target: uint32(n - 1), Reg: uint8(r.Intn(fn.NRegs))})
			}
		}
		p.Funcs = append(p.Funcs, fn)
	}
	return p
}

func randomInstr(r *rand.Rand, p *vmloop.Program, fn *vmloop.Function, nf, n int) vmloop.Instr {
	if r.Intn(20) == 0 {
		return vmloop.Instr(r.Uint64()) // usually not expressible: .word
	}
	for {
		op := vmloop.Op(r.Intn(vmloop.NumOps))
		info, _ := op.Info()
		if op == vmloop.RET && fn.Result == vmloop.TVoid || op == vmloop.RETV && fn.Result != vmloop.TVoid {
			continue
		}
		var x fields
		ok := true
		for _, od := range info.Operands {
			switch od.Kind {
			case vmloop.ODst, vmloop.OSrc, vmloop.OSrcDst:
				x.set(od.Field, int64(r.Intn(fn.NRegs)))
			case vmloop.OImm:
				lo, hi, _ := immRange(od.Field)
				v := lo + r.Int63n(hi-lo+1)
				if r.Intn(3) == 0 {
					v = []int64{lo, hi, 0, -1}[r.Intn(4)]
				}
				x.set(od.Field, v)
			case vmloop.OTarget:
				x.set(od.Field, int64(r.Intn(n+1)))
			case vmloop.OConstI, vmloop.OConstF, vmloop.OConstS, vmloop.OConstB, vmloop.OIntr:
				m := map[vmloop.OperandKind]int{vmloop.OConstI: len(p.KInt), vmloop.OConstF: len(p.KFlt),
					vmloop.OConstS: len(p.KStr), vmloop.OConstB: len(p.KBytes), vmloop.OIntr: len(p.Intrinsics)}[od.Kind]
				if m == 0 {
					ok = false
					break
				}
				x.set(od.Field, int64(r.Intn(m)))
			case vmloop.OFunc:
				x.set(od.Field, int64(r.Intn(nf)))
			case vmloop.OWindow:
				base := r.Intn(fn.NRegs)
				x.set(od.Field, int64(base))
				x.set(vmloop.FC, int64(r.Intn(fn.NRegs-base)))
			case vmloop.OElemType:
				t := int64(1 + r.Intn(3))
				if r.Intn(5) == 0 {
					t = int64(r.Intn(256))
				}
				x.set(od.Field, t)
			}
		}
		if ok {
			return vmloop.Encode(op, x.a, x.b, x.c, x.d)
		}
	}
}

func TestRoundTripRandom(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	n := 3000
	if testing.Short() {
		n = 300
	}
	words := 0
	for i := 0; i < n; i++ {
		p := randomProgram(r)
		text := roundTrip(t, fmt.Sprintf("random%d", i), p)
		words += strings.Count(text, ".word")
	}
	if words == 0 {
		t.Error("no .word lines: the generator never produced an inexpressible word")
	}
}
