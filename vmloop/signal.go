package vmloop

import "fmt"

// Signal is what the interpreter loop returns to its caller (the worker).
// It is VM control flow, never a JDL Result value (spec §3.3, S-18).
type Signal uint8

// Signals.
const (
	// SigCompleted: the entry function returned; Exec.Result holds the value.
	SigCompleted Signal = iota
	// SigThrown: a Throw escaped the entry function; Exec.Thrown holds the
	// error. The scheduler materialises it as the Failure outcome (S-12).
	SigThrown
	// SigTrapped: a fault (division by zero, bad handle, limit); Exec.Trap.
	SigTrapped
	// SigPreempted: the reduction budget ran out (or Stop was called) at a
	// safe point; pc points at the next instruction to run.
	SigPreempted
	// SigIntrinsic: the loop reached an intrinsic (a builtin opcode or
	// INTR); Exec.Request describes it and pc already points past it. The
	// caller completes it (Complete, Raise, SetTrap) now or after a wait, then
	// calls Run again.
	SigIntrinsic
	// SigWait: the loop armed a wait of the task through the scheduler's
	// hook (an event.wait with no kept signal, vmhook.Wait); Exec.Request
	// describes it as for SigIntrinsic. The caller parks the task and
	// completes the request when it resumes, as after its own answer to
	// SigIntrinsic suspended it. Only a scheduler's task record gets it.
	SigWait
	// SigYield: the task ran a YIELD, which the loop completed (pc points
	// past it, and no request is pending; its intrinsic's reductions are
	// the caller's to charge, as for a request). The caller lets the other
	// runnable tasks run first, as its answer to the yield request would.
	// Only a scheduler's task record gets it; any other Exec gets the
	// request (SigIntrinsic).
	SigYield
)

var signalNames = [...]string{"Completed", "Thrown", "Trap", "Preempted", "Intrinsic", "Wait", "Yield"}

func (s Signal) String() string {
	if int(s) < len(signalNames) {
		return signalNames[s]
	}
	return fmt.Sprintf("Signal(%d)", uint8(s))
}

// TrapCode classifies a trap.
type TrapCode uint8

// Trap codes.
const (
	TrapNone          TrapCode = iota
	TrapDivZero                // integer division or remainder by zero
	TrapOverflow               // MIN / -1 or MIN % -1
	TrapBounds                 // index out of range (bytes, arrays)
	TrapHandle                 // null, stale, foreign or wrong-kind handle
	TrapStackOverflow          // call depth limit
	TrapHeapLimit              // per-task heap bytes limit
	TrapKind                   // a join result's kind does not fit the destination
	TrapHostPanic              // a host intrinsic panicked
	TrapIntrinsic              // an intrinsic was misused (details in Msg)
	TrapUnverified             // the program was not verified (never with Load)
)

var trapNames = [...]string{"none", "division by zero", "integer overflow", "index out of range",
	"bad handle", "stack overflow", "heap limit", "kind mismatch", "host panic", "intrinsic", "unverified program"}

func (c TrapCode) String() string {
	if int(c) < len(trapNames) {
		return trapNames[c]
	}
	return fmt.Sprintf("trap(%d)", uint8(c))
}

// TrapInfo describes a trap: what happened and where.
type TrapInfo struct {
	Code TrapCode
	Msg  string
	Func string // function name
	PC   int    // pc of the trapping instruction
	// From the debug information: the source file and line of the
	// trapping instruction ("" and 0 when unknown).
	// TrapInfo stays comparable; the call stack is Exec.TrapStack.
	File string
	Line int
}

// Error formats the trap as "trap at fib@3 (fib.jasm:14): code: msg"; the
// source position is left out without debug information, and the whole
// position ("trap: code: msg") for a trap of no instruction (PC < 0 and no
// function: a task's result that did not fit its engine's budget).
func (t TrapInfo) Error() string {
	prefix := "trap"
	switch {
	case t.PC >= 0:
		prefix += " at " + StackFrame{Func: t.Func, PC: t.PC, File: t.File, Line: t.Line}.String()
	case t.Func != "":
		prefix += " in " + QuoteName(t.Func)
	}
	if t.Msg == "" {
		return fmt.Sprintf("%s: %s", prefix, t.Code)
	}
	return fmt.Sprintf("%s: %s: %s", prefix, t.Code, t.Msg)
}

// Limits bound one task's resources. Exhausting one traps the task (the
// per-engine limits on live tasks are in the scheduler and throw a
// catchable ResourceError instead).
type Limits struct {
	MaxFrames    int   // call depth
	MaxHeapBytes int64 // bytes of strings, buffers, arrays and errors owned by the task
	// Memory is the budget the task shares with the other tasks of its
	// engine (nil: none): its heap objects, stacks and copies out of its
	// heap are counted in it (see Budget).
	Memory *Budget
}

// DefaultLimits are the per-task defaults (docs/ISA.md, "Limits").
var DefaultLimits = Limits{MaxFrames: 10_000, MaxHeapBytes: 64 << 20}

// Request is a pending intrinsic request (after SigIntrinsic).
type Request struct {
	Intr *Intrinsic // resolved entry of the central table or a host intrinsic
	Op   Op         // the opcode that made the request (INTR or a builtin)
	Base uint8      // window base (INTR, SPAWN) or destination/first operand register
	// NArgs is the number of arguments: at most 255 (a window is at most
	// the 256 registers of a frame), 16 bits so that Request is 16 bytes
	// with no padding (the Exec inside a task record: TestRecordSizes).
	NArgs int16
	Func  int32 // SPAWN: index of the function to run in the new task
}
