package vmloop

import (
	"fmt"
	"strings"
)

// ISATable renders the ISA table as Markdown: one row per opcode with its
// operands (field and type), effect, reduction cost and properties. The
// table in docs/ISA.md is this output (a test keeps them in sync).
func ISATable() string {
	var sb strings.Builder
	sb.WriteString("| # | opcode | operands | effect | cost | properties |\n")
	sb.WriteString("|---|---|---|---|---|---|\n")
	for i := 0; i < NumOps; i++ {
		info := &opTable[i]
		var ops []string
		for _, o := range info.Operands {
			ops = append(ops, operandDoc(o))
		}
		cost := "1"
		if info.Flags&FlagBulk != 0 {
			cost = "1 + ⌈n/64⌉"
		}
		if c, ok := costDoc[Op(i)]; ok {
			cost = c
		} else if c, ok := bytesCostDoc[Op(i)]; ok {
			cost = c
		}
		fmt.Fprintf(&sb, "| %d | `%s` | %s | %s | %s | %s |\n", i, info.Name, strings.Join(ops, ", "),
			strings.ReplaceAll(info.Doc, "|", "\\|"), cost, flagsDoc(info))
	}
	return sb.String()
}

// costDoc is the cost of the opcodes whose size-dependent part is not
// ceil(n/64) of n bytes (interp_long.go, Exec.unwind).
var costDoc = map[Op]string{
	ANEW:  "1 + ⌈8n/64⌉ (n elements)",
	ASETR: "1 + n (n elements visited by the cycle check)",
	THROW: "1 + frames unwound",
	BFIND: "as bfindr",
}

var fieldNames = [...]string{FA: "A", FB: "B", FC: "C", FD: "D", FBC: "BC", FD0: "D0", FD1: "D1"}

func operandDoc(o Operand) string {
	f := fieldNames[o.Field]
	switch o.Kind {
	case ODst:
		return fmt.Sprintf("%s:%s←", f, o.Type)
	case OSrc:
		if o.Type == TVoid {
			return f + ":result type"
		}
		return fmt.Sprintf("%s:%s", f, o.Type)
	case OImm:
		if o.Field == FBC {
			return f + ":imm16"
		}
		return f + ":imm32"
	case OTarget:
		return f + ":label"
	case OConstI:
		return f + ":kint"
	case OConstF:
		return f + ":kflt"
	case OConstS:
		return f + ":kstr"
	case OConstB:
		return f + ":kbytes"
	case OFunc:
		return f + ":func"
	case OIntr:
		return f + ":import"
	case OWindow:
		return "A..A+C-1:window"
	case OElemType:
		return f + ":elemtype"
	}
	return "?"
}

func flagsDoc(info *OpInfo) string {
	var p []string
	if info.Flags&FlagSafePoint != 0 {
		p = append(p, "safe point")
	}
	if info.Flags&FlagBranch != 0 {
		p = append(p, "branch (safe point when backward)")
	}
	if info.Flags&FlagMayThrow != 0 {
		p = append(p, "may throw")
	}
	if info.Flags&FlagTrapping != 0 {
		p = append(p, "may trap")
	}
	if info.Flags&FlagBulk != 0 {
		p = append(p, "bulk")
	}
	if info.Intrinsic != "" {
		p = append(p, "builtin `"+info.Intrinsic+"`")
	} else if info.Flags&FlagIntrinsic != 0 {
		p = append(p, "intrinsic")
	}
	return strings.Join(p, "; ")
}

// IntrinsicTable renders the central intrinsic table as Markdown.
func IntrinsicTable() string {
	var sb strings.Builder
	sb.WriteString("| id | name | params | result | since | builtin opcode | via `intr` |\n")
	sb.WriteString("|---|---|---|---|---|---|---|\n")
	for _, in := range centralTable {
		var ps []string
		for _, p := range in.Params {
			ps = append(ps, p.String())
		}
		b := "—"
		if in.Builtin != NOP {
			b = "`" + in.Builtin.String() + "`"
		}
		via := "yes"
		if !in.IntrOK {
			via = "no"
		}
		fmt.Fprintf(&sb, "| %d | `%s` | %s | %s | %s | %s | %s |\n", in.ID, in.Name, strings.Join(ps, ", "), in.Result, in.Since, b, via)
	}
	return sb.String()
}
