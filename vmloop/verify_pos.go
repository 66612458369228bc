package vmloop

import (
	"strconv"
	"unicode"
)

// Positions in verifier errors, from the program's debug information: the
// source file (Program.File), the line of each instruction (Function.Lines)
// and the declared register names (Function.RegNames). Debug information is
// never trusted for safety; here it only decorates messages, and a value
// that could garble a message (a control character in a name read from a
// .jbc) is quoted or left out.

// Line returns the source line of the instruction at pc from the debug
// information, or 0 when it is unknown.
func (f *Function) Line(pc int) int {
	if pc < 0 || pc >= len(f.Lines) || len(f.Lines) != len(f.Code) || f.Lines[pc] <= 0 {
		return 0
	}
	return int(f.Lines[pc])
}

// vfPosition formats "file:line: ", "file: " or "line N: " for a message
// prefix, or "" when neither is known. A column (col > 0) follows a known
// line: "file:line:col: ", "line N:col: ".
func vfPosition(file string, line, col int) string {
	file = vfPrintable(file)
	at := ""
	if line > 0 {
		at = strconv.Itoa(line)
		if col > 0 {
			at += ":" + strconv.Itoa(col)
		}
	}
	switch {
	case file != "" && at != "":
		return file + ":" + at + ": "
	case file != "":
		return file + ": "
	case at != "":
		return "line " + at + ": "
	}
	return ""
}

// vfPrintable returns s, quoted when it holds a character that is not
// printable (a newline would split the message).
func vfPrintable(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// vfRegName names register r of f in a message: "r2 (n)" when the debug
// information declares the name n, else "r2".
func vfRegName(f *Function, r uint8) string {
	s := "r" + strconv.Itoa(int(r))
	if int(r) < len(f.RegNames) {
		if n := f.RegNames[r]; vfPlainName(n) {
			return s + " (" + n + ")"
		}
	}
	return s
}

// vfPlainName reports whether n is a plain assembler name, at most 64
// bytes long.
func vfPlainName(n string) bool {
	if n == "" || len(n) > 64 {
		return false
	}
	for i, c := range []byte(n) {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// importErr reports a problem with import i at its first use by an intr
// instruction, so that the message carries that instruction's function,
// pc and source line; an import that no instruction uses is reported at
// program level, at the position of its .import entry when the debug
// information has one.
func (v *verifier) importErr(i int, format string, args ...any) error {
	for fi := range v.p.Funcs {
		for pc, ins := range v.p.Funcs[fi].Code {
			if ins.Op() == INTR && int(ins.D()) == i {
				return v.funcErr(fi, pc, format, args...)
			}
		}
	}
	e := v.progErr(format, args...).(*VerifyError)
	if imp := v.p.Intrinsics[i]; imp.Line > 0 {
		e.Line, e.Col = int(imp.Line), max(int(imp.Col), 0)
	}
	return e
}
