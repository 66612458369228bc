package vmloop

import (
	"strconv"
	"strings"
)

// MaxStackFrames is how many frames a Stack keeps, innermost first; a
// deeper stack keeps its depth in Stack.Depth.
const MaxStackFrames = 32

// StackFrame is one frame of a Jade call stack: the function, the pc of the
// instruction it was running (a caller's call), and that instruction's
// source position from the debug information ("" and 0 when unknown).
type StackFrame struct {
	Func string
	PC   int
	File string
	Line int
}

// String formats f as "fib@3 (fib.jasm:14)", or "fib@3" without debug
// information.
func (f StackFrame) String() string {
	s := QuoteName(f.Func) + "@" + strconv.Itoa(f.PC) // a name from a .jbc may hold a newline
	if p := strings.TrimSuffix(vfPosition(f.File, f.Line, 0), ": "); p != "" {
		s += " (" + p + ")"
	}
	return s
}

// Stack is the Jade call stack where a task trapped or threw the error
// that ended it: at most MaxStackFrames frames, innermost first, and the
// full depth.
type Stack struct {
	Frames []StackFrame
	Depth  int
}

// String formats s one frame a line, each as "  at fib@3 (fib.jasm:14)",
// with a last line counting the frames left out.
func (s Stack) String() string {
	var b strings.Builder
	for i, f := range s.Frames {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("  at ")
		b.WriteString(f.String())
	}
	if n := s.Depth - len(s.Frames); n > 0 {
		b.WriteString("\n  ... " + strconv.Itoa(n) + " more frames")
	}
	return b.String()
}

// stackFrame describes instruction pc of function fn.
func (e *Exec) stackFrame(fn, pc int) StackFrame {
	f := &e.prog.Funcs[fn]
	return StackFrame{Func: f.Name, PC: pc, File: e.prog.FuncFile(fn), Line: f.Line(pc)}
}

// stackAt returns the call stack with the current frame at pc: each
// caller at the call that made its callee (its saved pc minus one).
func (e *Exec) stackAt(pc int) Stack {
	s := Stack{Depth: e.fp + 1}
	for i := e.fp; i >= 0 && len(s.Frames) < MaxStackFrames; i-- {
		at := pc
		if i < e.fp {
			at = e.frames[i].pc - 1
		}
		s.Frames = append(s.Frames, e.stackFrame(e.frames[i].fn, at))
	}
	return s
}

// placeTrap puts ti at pc of the current frame (function, pc, source
// position) and records the call stack for TrapStack.
func (e *Exec) placeTrap(ti *TrapInfo, pc int) {
	if len(e.frames) == 0 || e.prog == nil {
		return
	}
	fn := e.frames[e.fp].fn
	sf := e.stackFrame(fn, pc)
	ti.Func, ti.PC, ti.File, ti.Line = sf.Func, pc, sf.File, sf.Line
	e.x().trapAt = e.stackAt(pc)
}

// TrapStack returns the call stack where the task trapped; the zero Stack
// when it has not trapped (or trapped outside any instruction).
func (e *Exec) TrapStack() Stack {
	if e.state != stTrapped || e.rare == nil {
		return Stack{}
	}
	return e.rare.trapAt
}

// ThrownStack returns the call stack where the error that ended the task
// (Thrown) was thrown; the zero Stack when the task did not end by an
// uncaught throw.
func (e *Exec) ThrownStack() Stack {
	if e.state != stThrown {
		return Stack{}
	}
	return e.x().thrownAt
}
