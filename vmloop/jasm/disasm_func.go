package jasm

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/jadevm/jade/vmloop"
)

type funcPrinter struct {
	pr       *printer
	fn       *vmloop.Function
	names    []string      // register names ("" for raw)
	types    []vmloop.Type // declared types as the text states them
	ndecl    int           // params + declared locals
	labels   map[int]string
	lines    []string // one per pc
	comments []string // .word explanations
}

func (pr *printer) newFunc(fn *vmloop.Function) *funcPrinter {
	fp := &funcPrinter{pr: pr, fn: fn, labels: map[int]string{}}
	n := len(fn.Params)
	if fn.NRegs > n {
		n = min(fn.NRegs, 1<<16) // registers past MaxRegs are printed raw
	}
	fp.names = make([]string, n)
	fp.types = make([]vmloop.Type, n)
	used := map[string]bool{}
	nameOf := func(i int) string {
		if i < len(fn.RegNames) {
			if s := fn.RegNames[i]; isName(s) && !used[s] {
				return s
			}
		}
		return ""
	}
	for i, t := range fn.Params {
		if s := nameOf(i); s != "" {
			fp.names[i] = s
			used[s] = true
		}
		fp.types[i] = t
	}
	fp.ndecl = len(fn.Params)
	for i := len(fn.Params); i < fn.NRegs && i < len(fn.RegTypes) && i < n; i++ {
		t := fn.RegTypes[i]
		s := nameOf(i)
		if s == "" || t < vmloop.TI64 || t > vmloop.TRef {
			break
		}
		fp.names[i], fp.types[i] = s, t
		used[s] = true
		fp.ndecl = i + 1
	}

	// Labels: debug names first, then Lnn for the remaining targets.
	need := map[int]bool{}
	for _, h := range fn.Handlers {
		need[int(h.Start)], need[int(h.End)], need[int(h.Target)] = true, true, true
	}
	taken := map[string]bool{}
	pcs := make([]int, 0, len(fn.Labels))
	for pc := range fn.Labels {
		pcs = append(pcs, pc)
	}
	sort.Ints(pcs)
	for _, pc := range pcs {
		if s := fn.Labels[pc]; pc >= 0 && pc <= len(fn.Code) && isName(s) && !taken[s] {
			fp.labels[pc] = s
			taken[s] = true
		}
	}
	fp.lines = make([]string, len(fn.Code))
	fp.comments = make([]string, len(fn.Code))
	var targets []int
	for pc, ins := range fn.Code {
		text, target, ok := fp.decode(ins)
		if !ok {
			fp.lines[pc] = fmt.Sprintf(".word 0x%016x", uint64(ins))
			fp.comments[pc] = ins.Op().String()
			continue
		}
		fp.lines[pc] = text
		if target >= 0 {
			need[target] = true
			targets = append(targets, pc)
		}
	}
	needed := make([]int, 0, len(need))
	for pc := range need {
		needed = append(needed, pc)
	}
	sort.Ints(needed)
	for _, pc := range needed {
		if _, ok := fp.labels[pc]; ok {
			continue
		}
		s := "L" + strconv.Itoa(pc)
		for k := 2; taken[s]; k++ {
			s = "L" + strconv.Itoa(pc) + "_" + strconv.Itoa(k)
		}
		fp.labels[pc] = s
		taken[s] = true
	}
	// Branch targets were decoded before the labels had names.
	for _, pc := range targets {
		t := int(fn.Code[pc].D())
		fp.lines[pc] = strings.Replace(fp.lines[pc], "\x00", fp.labels[t], 1)
	}
	return fp
}

// reg writes register i as used where type want is expected: its name when
// the declared type fits, else raw rN (raw registers are never
// type-checked, so the text always assembles).
func (fp *funcPrinter) reg(i int, want vmloop.Type) string {
	if i < len(fp.names) && fp.names[i] != "" && (want == vmloop.TVoid || fp.types[i] == want) {
		return fp.names[i]
	}
	return "r" + strconv.Itoa(i)
}

func getField(ins vmloop.Instr, fl vmloop.Field) int64 {
	switch fl {
	case vmloop.FA:
		return int64(ins.A())
	case vmloop.FB:
		return int64(ins.B())
	case vmloop.FC:
		return int64(ins.C())
	case vmloop.FD:
		return int64(ins.D())
	case vmloop.FBC:
		return int64(ins.BC())
	case vmloop.FD0:
		return int64(ins.D0())
	case vmloop.FD1:
		return int64(ins.D1())
	}
	return 0
}

// decode renders one instruction from its ISA table row. A branch target
// is left as a \x00 placeholder and returned. ok is false when the
// assembler could not reproduce the word from the text.
func (fp *funcPrinter) decode(ins vmloop.Instr) (text string, target int, ok bool) {
	fn, pr := fp.fn, fp.pr
	target = -1
	op := ins.Op()
	info, ok := op.Info()
	if !ok {
		return "", -1, false
	}
	switch {
	case op == vmloop.RET && fn.Result == vmloop.TVoid, op == vmloop.RETV && fn.Result != vmloop.TVoid:
		return "", -1, false
	}
	var re fields
	ops := make([]string, 0, len(info.Operands))
	var uses []func()
	for _, od := range info.Operands {
		v := getField(ins, od.Field)
		re.set(od.Field, v)
		switch od.Kind {
		case vmloop.ODst, vmloop.OSrc, vmloop.OSrcDst:
			if int(v) >= fn.NRegs {
				return "", -1, false
			}
			want := od.Type
			if op == vmloop.RET {
				want = fn.Result
			}
			ops = append(ops, fp.reg(int(v), want))
		case vmloop.OImm:
			ops = append(ops, strconv.FormatInt(v, 10))
		case vmloop.OTarget:
			if v < 0 || v > int64(len(fn.Code)) {
				return "", -1, false
			}
			target = int(v)
			ops = append(ops, "\x00")
		case vmloop.OConstI:
			if v < 0 || v >= int64(len(pr.kintRef)) {
				return "", -1, false
			}
			ops = append(ops, pr.kintRef[v])
			if pr.kintRef[v][0] != '#' {
				uses = append(uses, func() { pr.useInt = append(pr.useInt, int(v)) })
			}
		case vmloop.OConstF:
			if v < 0 || v >= int64(len(pr.kfltRef)) {
				return "", -1, false
			}
			ops = append(ops, pr.kfltRef[v])
			if pr.kfltRef[v][0] != '#' {
				uses = append(uses, func() { pr.useFlt = append(pr.useFlt, int(v)) })
			}
		case vmloop.OConstS:
			if v < 0 || v >= int64(len(pr.kstrRef)) {
				return "", -1, false
			}
			ops = append(ops, pr.kstrRef[v])
			if pr.kstrRef[v][0] != '#' {
				uses = append(uses, func() { pr.useStr = append(pr.useStr, int(v)) })
			}
		case vmloop.OConstB:
			if v < 0 || v >= int64(len(pr.kbRef)) {
				return "", -1, false
			}
			ops = append(ops, pr.kbRef[v])
			if pr.kbRef[v][0] != '#' {
				uses = append(uses, func() { pr.useB = append(pr.useB, int(v)) })
			}
		case vmloop.OFunc:
			if v < 0 || v >= int64(len(pr.funcRef)) {
				return "", -1, false
			}
			ops = append(ops, pr.funcRef[v])
		case vmloop.OIntr:
			if v < 0 || v >= int64(len(pr.intrRef)) {
				return "", -1, false
			}
			if in, found := vmloop.LookupIntrinsic(pr.p.Intrinsics[v].Name); found && !in.IntrOK {
				return "", -1, false
			}
			ops = append(ops, pr.intrRef[v])
			if pr.intrRef[v][0] != '#' {
				uses = append(uses, func() { pr.useIntr = append(pr.useIntr, int(v)) })
			}
		case vmloop.OWindow:
			n := int64(ins.C())
			re.set(vmloop.FC, n)
			if v+max(n, 1) > int64(fn.NRegs) {
				return "", -1, false
			}
			ops = append(ops, "("+fp.reg(int(v), vmloop.TVoid)+", "+strconv.FormatInt(n, 10)+")")
		case vmloop.OElemType:
			if v >= int64(vmloop.TI64) && v <= int64(vmloop.TRef) {
				ops = append(ops, vmloop.Type(v).String())
			} else {
				ops = append(ops, strconv.FormatInt(v, 10))
			}
		}
	}
	if op == vmloop.SPAWN && ins.B() == vmloop.SpawnDetached {
		// spawn _, (base, n), fn: detached, no handle (the assembler's
		// exact form for field B)
		re.b = vmloop.SpawnDetached
		ops = append([]string{"_"}, ops...)
	}
	if vmloop.Encode(op, re.a, re.b, re.c, re.d) != ins {
		return "", -1, false // bits outside the operands
	}
	for _, u := range uses {
		u()
	}
	if len(ops) == 0 {
		return info.Name, target, true
	}
	return fmt.Sprintf("%-9s %s", info.Name, strings.Join(ops, ", ")), target, true
}

func (fp *funcPrinter) print() {
	pr, fn := fp.pr, fp.fn
	var params []string
	for i, t := range fn.Params {
		if fp.names[i] != "" {
			params = append(params, fp.names[i]+":"+t.String())
		} else {
			params = append(params, t.String())
		}
	}
	name := fn.Name
	if !isName(name) {
		name = quote(name)
	}
	pr.printf(".func %s(%s)", name, strings.Join(params, ", "))
	if fn.Result != vmloop.TVoid {
		pr.printf(" -> %s", fn.Result)
	}
	pr.printf("\n")
	var locals []string
	for i := len(fn.Params); i < fp.ndecl; i++ {
		locals = append(locals, fp.names[i]+":"+fp.types[i].String())
	}
	for len(locals) > 0 {
		k := min(len(locals), 8)
		pr.printf("  .local %s\n", strings.Join(locals[:k], ", "))
		locals = locals[k:]
	}
	if fn.NRegs != fp.ndecl {
		pr.printf("  .regs %d\n", fn.NRegs)
	}
	for _, h := range fn.Handlers {
		pr.printf("  .try %s, %s, %s, %s\n", fp.labels[int(h.Start)], fp.labels[int(h.End)], fp.labels[int(h.Target)], fp.reg(int(h.Reg), vmloop.TRef))
	}
	blocks := map[int]vmloop.Block{}
	if fp.pr.opt.Annotate {
		for _, b := range fn.Blocks {
			blocks[b.Start] = b
		}
	}
	for pc, line := range fp.lines {
		if l, ok := fp.labels[pc]; ok {
			pr.printf("%s:\n", l)
		}
		if b, ok := blocks[pc]; ok {
			sp := ""
			if b.SafePoint {
				sp = ", ends at a safe point"
			}
			pr.printf("  ; block %d..%d cost %d%s\n", b.Start, b.End-1, b.Cost, sp)
		}
		var comment []string
		if fp.pr.opt.Annotate {
			comment = append(comment, "@"+strconv.Itoa(pc))
		}
		if fp.pr.opt.Lines {
			if l := fn.Line(pc); l > 0 {
				file := fn.File
				if file == "" {
					file = pr.p.File
				}
				comment = append(comment, sourcePos(file, l))
			}
		}
		if fp.comments[pc] != "" {
			comment = append(comment, fp.comments[pc])
		}
		if len(comment) > 0 {
			pr.printf("  %-40s ; %s\n", line, strings.Join(comment, " "))
		} else {
			pr.printf("  %s\n", line)
		}
	}
	if l, ok := fp.labels[len(fn.Code)]; ok {
		pr.printf("%s:\n", l)
	}
	// Labels past the end (malformed handlers) are still named, so the
	// text reports them as undefined instead of silently dropping them.
	pr.printf(".end\n")
}
