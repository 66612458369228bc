package vmloop

import "unsafe"

// Program is a Jade bytecode program: functions, constant pools and the
// intrinsics it imports. A Program is untrusted until Verify accepts it;
// after that it is immutable and may be shared by any number of tasks and
// workers.
type Program struct {
	ABI        Version // intrinsic ABI the program needs (.abi)
	Funcs      []Function
	KInt       []int64   // i64 constant pool (LDK)
	KFlt       []float64 // f64 constant pool (LDF)
	KStr       []string  // string constant pool (LDS), interned at load
	KBytes     [][]byte  // bytes constant pool (LDB; ABI 1.3): each LDB copies its entry
	Intrinsics []Import  // intrinsic imports named by INTR

	// File is the name of the source file the program was assembled from
	// (debug information, like Function.Lines): verifier errors and traps
	// print it with the line. "" when unknown.
	File string
	// ABILine is the source line of the .abi directive (debug
	// information); 0 when unknown or when the program has none.
	ABILine int32

	// Filled by Verify.
	verified bool

	native unsafe.Pointer // *vmhook.Program, made by nativeProgram on first use
}

// Import names an intrinsic a program uses through INTR. Verify resolves it
// against the central table (and a host Resolver) and fills Resolved.
type Import struct {
	Name     string
	Resolved *Intrinsic

	// Line and Col are the source position of the .import entry that
	// declared the import (debug information, like Function.Lines): a
	// problem with an import that no instruction uses is reported there.
	// 0 when unknown or when an instruction that names it added it.
	Line, Col int32
}

// Function is one function of a program. Parameters occupy registers
// 0..len(Params)-1; NRegs is the frame size (parameters included), at most
// MaxRegs.
type Function struct {
	Name     string
	Params   []Type
	Result   Type
	NRegs    int
	Code     []Instr
	Handlers []Handler // innermost first: the first covering entry wins

	// Debug information: optional, never trusted for safety.
	RegNames []string // source names of registers (len NRegs or 0)
	RegTypes []Type   // declared types of registers (len NRegs or 0)
	Lines    []int32  // source line of each instruction (len Code or 0)
	Labels   map[int]string
	// File is the source file the function was assembled from when it is
	// not Program.File: a function linked in from an imported module
	// (docs/JASM.md, "Modules") keeps its own file, so traps, profiles and
	// the task dump name std/bytes.jasm:12, not the importing file. ""
	// means Program.File.
	File string

	// Filled by Verify.
	Blocks []Block // basic blocks in pc order
	// straight: no backward branch, no call and no handler, so a task
	// whose entry function this is runs at most len(Code) instructions
	// in all (Run gives such a task to the Go loop: a cgo crossing would
	// cost more than the C loop could win).
	straight bool
	// refParams: some parameter is a reference (a spawn of f may pass an
	// ext object: spawnHasExt).
	refParams bool
	// handlerAt[pc] is the index in Handlers of the handler that catches
	// an exception raised at pc (the first covering entry), -1 for none;
	// nil when there are no handlers. A throw looks up each frame it
	// unwinds in O(1), whatever the number of handlers (Exec.unwind).
	handlerAt []int32
}

// Handler is a .try range: an exception raised by an instruction at pc with
// Start <= pc < End transfers control to Target with the error handle in
// register Reg. Handlers nest; a handler lies outside its own range.
type Handler struct {
	Start, End, Target uint32
	Reg                uint8
}

// Block is a basic block of a verified function with its reduction cost:
// the sum of the static costs of its instructions (1 each; bulk operations
// add their size-dependent part at run time).
type Block struct {
	Start, End int // [Start, End)
	Cost       int
	// SafePoint is true when the block ends in a safe point.
	SafePoint bool
}

// Verified reports whether Verify has accepted the program.
func (p *Program) Verified() bool { return p.verified }

// FuncName returns the name of function i, or "" if i is out of range or
// p is nil.
func (p *Program) FuncName(i int) string {
	if p == nil || i < 0 || i >= len(p.Funcs) {
		return ""
	}
	return p.Funcs[i].Name
}

// FuncFile returns the source file of function i: its own File when it
// has one (a function linked in from a module), else p.File. "" when
// unknown, when i is out of range or when p is nil.
func (p *Program) FuncFile(i int) string {
	if p == nil || i < 0 || i >= len(p.Funcs) {
		return ""
	}
	if f := p.Funcs[i].File; f != "" {
		return f
	}
	return p.File
}

// FuncIndex returns the index of the named function, or -1.
func (p *Program) FuncIndex(name string) int {
	for i := range p.Funcs {
		if p.Funcs[i].Name == name {
			return i
		}
	}
	return -1
}
