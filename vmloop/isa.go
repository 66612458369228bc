package vmloop

import "fmt"

// This file is the single source of truth for the instruction set: the
// assembler, the disassembler, the verifier, the interpreter and the ISA
// document (docs/ISA.md) all read the table below. An opcode's number is its
// position in the Op enumeration; it is part of the binary format, so new
// opcodes are only ever appended.

// Type is the static type of a register slot. Every register holds 64 bits;
// the type says how those bits are read.
type Type uint8

// Register and result types.
const (
	TVoid Type = iota // no value (function results only)
	TI64              // two's-complement 64-bit integer; booleans are 0/1
	TF64              // IEEE-754 binary64, stored as its bit pattern
	TRef              // a handle into the running task's heap (never an integer)
)

var typeNames = [...]string{TVoid: "void", TI64: "i64", TF64: "f64", TRef: "ref"}

func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// ParseType maps "i64", "f64", "ref" and "void" to a Type.
func ParseType(s string) (Type, bool) {
	for i, n := range typeNames {
		if n == s {
			return Type(i), true
		}
	}
	return 0, false
}

// SpawnDetached in a SPAWN's field B spawns the task detached: no handle
// to it is made and no register of the spawner changes (jasm's
// `spawn _, f, args...`), like Go's go statement or a dropped Tokio
// JoinHandle. Nothing can join or cancel that task but the host's
// cancel-all; it is still registered, counted live, drained and dumped,
// and its record is reused as soon as it ends (no handle keeps it).
// Field B of a SPAWN is 0 or SpawnDetached.
const SpawnDetached = 1

// MaxRegs is the largest register frame of one function. Register operands
// are 8-bit, so an interpreter can view a frame as *[MaxRegs]uint64 without
// bounds checks; the register stack always keeps MaxRegs slots above the
// current frame base.
const MaxRegs = 256

// Instr is one fixed-width instruction word:
//
//	bits  0..7   op
//	bits  8..15  A  (register, usually the destination or window base)
//	bits 16..23  B  (register)
//	bits 24..31  C  (register, argument count or element type)
//	bits 32..63  D  (signed 32-bit: immediate, branch target, pool index;
//	                 or two more registers D0 = bits 32..39, D1 = bits 40..47)
//
// BC is B and C read together as a signed 16-bit immediate (B low byte).
type Instr uint64

// Op returns the opcode.
func (i Instr) Op() Op { return Op(uint8(i)) }

// A returns field A.
func (i Instr) A() uint8 { return uint8(i >> 8) }

// B returns field B.
func (i Instr) B() uint8 { return uint8(i >> 16) }

// C returns field C.
func (i Instr) C() uint8 { return uint8(i >> 24) }

// D returns field D as a signed 32-bit value.
func (i Instr) D() int32 { return int32(uint32(i >> 32)) }

// D0 returns the low byte of D (a register).
func (i Instr) D0() uint8 { return uint8(i >> 32) }

// D1 returns the second byte of D (a register).
func (i Instr) D1() uint8 { return uint8(i >> 40) }

// BC returns B and C as a signed 16-bit immediate.
func (i Instr) BC() int16 { return int16(uint16(i >> 16)) }

// Encode builds an instruction word from its fields.
func Encode(op Op, a, b, c uint8, d int32) Instr {
	return Instr(uint64(op) | uint64(a)<<8 | uint64(b)<<16 | uint64(c)<<24 | uint64(uint32(d))<<32)
}

// EncodeBC builds an instruction whose B and C fields hold a 16-bit immediate.
func EncodeBC(op Op, a uint8, bc int16, d int32) Instr {
	u := uint16(bc)
	return Encode(op, a, uint8(u), uint8(u>>8), d)
}

// EncodeD01 packs two registers into D.
func EncodeD01(d0, d1 uint8) int32 { return int32(uint32(d0) | uint32(d1)<<8) }

// Field names where an operand lives in the instruction word.
type Field uint8

// Instruction fields.
const (
	FA Field = iota
	FB
	FC
	FD
	FBC // B and C as a signed 16-bit immediate
	FD0 // low byte of D
	FD1 // second byte of D
)

// OperandKind classifies an operand for the assembler, disassembler and
// verifier.
type OperandKind uint8

// Operand kinds.
const (
	ODst      OperandKind = iota // register written with Type
	OSrc                         // register read as Type
	OSrcDst                      // register read and written as Type (bset's buffer is OSrc; this is for in-place)
	OImm                         // signed immediate in Field
	OTarget                      // branch target: absolute pc in the same function (FD)
	OConstI                      // index into the i64 constant pool (FD)
	OConstF                      // index into the f64 constant pool (FD)
	OConstS                      // index into the string constant pool (FD)
	OFunc                        // function index (FD)
	OIntr                        // index into the program's intrinsic import table (FD)
	OWindow                      // window base register (FA) with argument count (FC)
	OElemType                    // array element type (FC): TI64, TF64 or TRef
	OConstB                      // index into the bytes constant pool (FD)
)

// Operand describes one operand of an opcode, in assembly order.
type Operand struct {
	Kind  OperandKind
	Type  Type
	Field Field
}

// Op is an opcode.
type Op uint8

// Flags describe how an opcode interacts with control flow and the budget.
type Flags uint16

// Opcode flags.
const (
	FlagBranch     Flags = 1 << iota // may transfer control to its OTarget operand
	FlagJump                         // always transfers control (no fall-through)
	FlagTerminator                   // ends the function (ret, throw, tailcall)
	FlagSafePoint                    // preemption may happen here (see docs/ISA.md)
	FlagMayThrow                     // may raise a catchable Throw (exception edge)
	FlagBulk                         // costs by size: 1 + ceil(n/64)
	FlagIntrinsic                    // leaves the loop with an intrinsic request
	FlagTrapping                     // may trap (division, bounds, handles)
)

// OpInfo is one row of the ISA table.
type OpInfo struct {
	Name     string
	Operands []Operand
	Flags    Flags
	// Intrinsic is the central intrinsic table name this builtin lowers to
	// (spec §5.2 lowering 1), or "" for plain opcodes.
	Intrinsic string
	// Doc is the effect, in the notation of docs/ISA.md.
	Doc string
}

// Opcodes. Numbers are part of the binary format: append only.
const (
	NOP Op = iota

	// data
	MOVI // a:i64 = b:i64
	MOVF // a:f64 = b:f64
	MOVR // a:ref = b:ref (the handle is copied; both name the same object)
	LDI  // a:i64 = D (sign-extended 32-bit immediate)
	LDK  // a:i64 = kint[D]
	LDF  // a:f64 = kflt[D]
	LDS  // a:ref = new handle to interned string kstr[D]

	// i64 arithmetic (wrapping) and logic
	ADD
	SUB
	MUL
	DIV // traps on b/0 and MIN/-1
	REM // traps on b%0 and MIN%-1
	NEG
	AND
	OR
	XOR
	SHL // count masked to 6 bits
	SHR // logical
	SAR // arithmetic
	ADDI
	SUBI
	MULI
	ANDI
	SHLI
	SHRI
	SARI

	// i64 comparisons (result 0/1)
	EQ
	NE
	LT
	LE
	GT
	GE

	// f64
	FADD
	FSUB
	FMUL
	FDIV
	FNEG
	FSQRT
	FLT
	FLE
	FEQ
	ITOF
	FTOI // saturating, NaN -> 0

	// branches
	JMP
	JZ
	JNZ
	JEQ
	JNE
	JLT
	JLE
	JGT
	JGE
	JEQI
	JNEI
	JLTI
	JLEI
	JGTI
	JGEI

	// calls
	CALL     // window call: args in a..a+c-1, callee frame starts at a, result lands in a
	RET      // return a (result type of the function)
	RETV     // return from a void function
	TAILCALL // replace the current frame with a call to D, args a..a+c-1

	// errors
	NEWERR  // a:ref = new error with message b:ref(string), kind "Error"
	THROW   // throw a:ref(error)
	ERRMSG  // a:ref = message string of error b
	ERRKIND // a:ref = kind string of error b

	// strings
	SLEN    // a:i64 = byte length of string b
	SCONCAT // a:ref = new string b ++ c
	SEQ     // a:i64 = string b == string c
	ITOS    // a:ref = decimal string of b:i64
	STOB    // a:ref = new bytes copied from string b
	BTOS    // a:ref = new string copied from bytes b

	// byte buffers
	BNEW   // a:ref = new zeroed bytes of length b:i64
	BLEN   // a:i64 = length of bytes b
	BGET   // a:i64 = bytes b[c] (0..255), traps out of range
	BSET   // bytes a[b] = c & 0xff, traps out of range
	BCOPY  // copy bytes c[D0 .. D0+D1] into bytes a at b; returns nothing; traps out of range
	BSLICE // a:ref = new bytes copied from b[c:D0]
	BFIND  // a:i64 = index of needle c in bytes b starting at D0, or -1
	BEQ    // a:i64 = bytes b == bytes c

	// arrays (element type fixed at creation, checked on each access)
	ANEW  // a:ref = new array of b:i64 elements of type C (zero / null)
	ALEN  // a:i64 = length of array b
	AGETI // a:i64 = array b[c]
	AGETF // a:f64 = array b[c]
	AGETR // a:ref = array b[c] (may be the null handle)
	ASETI // array a[b] = c:i64
	ASETF // array a[b] = c:f64
	ASETR // array a[b] = c:ref (mutable objects may not be stored in arrays they contain)

	// tasks and events: builtin lowerings of central intrinsics (§5.2, lowering 1)
	SPAWN     // window: spawn function D with args a..a+c-1; a:ref = task handle (B = SpawnDetached: none, no register written)
	JOINI     // a:i64 = value of task b (waits; Failure re-thrown; Trap/Cancelled re-thrown as TaskError)
	JOINF     // a:f64 = value of task b
	JOINR     // a:ref = value of task b
	JOINV     // wait for task a (void or discarded value)
	OUTCOME   // a:i64 = outcome code of task b (waits): 0 Success 1 Failure 2 Trap 3 Cancelled
	YIELD     // let other runnable tasks run
	CANCEL    // request cancellation of task a
	CANCELLED // a:i64 = 1 if the running task has been asked to cancel
	EVNEW     // a:ref = new event
	EVWAIT    // wait on event a (auto-reset)
	EVSIGNAL  // signal event a (wakes one waiter or is kept)
	EVBCAST   // wake every waiter of event a

	// generic intrinsic (§5.2, lowering 2)
	INTR // window: call intrinsic import D with args a..a+c-1; result (if any) in a

	// heap
	FREE // release object a now; every copy of its handle becomes stale

	// ABI 1.3: bounded byte and string primitives (isa_bytes.go)
	BFINDR   // a:i64 = first index in [D0, D1) of needle c in bytes b, or -1
	BCMP     // a:i64 = compare(b[c:min(c+len(D1), D0)], D1) in {-1, 0, 1}
	BCASECMP // bcmp with ASCII case folding
	BTOI     // a:i64 = decimal integer at bytes b[c:D0]; D1:i64 = offset past it
	STOI     // btoi on a string
	ITOB     // a:i64 = offset past decimal(D0) written into bytes b at c
	LDB      // a:ref = new bytes copied from kbytes[D]

	numOps
)

// NumOps is the number of defined opcodes.
const NumOps = int(numOps)

func dst(t Type, f Field) Operand { return Operand{ODst, t, f} }
func src(t Type, f Field) Operand { return Operand{OSrc, t, f} }

var (
	rrI = []Operand{dst(TI64, FA), src(TI64, FB), src(TI64, FC)}
	rrF = []Operand{dst(TF64, FA), src(TF64, FB), src(TF64, FC)}
	riI = []Operand{dst(TI64, FA), src(TI64, FB), {OImm, TI64, FD}}
	cmF = []Operand{dst(TI64, FA), src(TF64, FB), src(TF64, FC)}
	brR = []Operand{src(TI64, FA), src(TI64, FB), {OTarget, 0, FD}}
	brI = []Operand{src(TI64, FA), {OImm, TI64, FBC}, {OTarget, 0, FD}}
	win = []Operand{{OWindow, 0, FA}, {OFunc, 0, FD}}
)

const (
	sp = FlagSafePoint
	mt = FlagMayThrow
	tr = FlagTrapping
	in = FlagIntrinsic | FlagSafePoint
)

// opTable is indexed by Op.
var opTable = [...]OpInfo{
	NOP: {Name: "nop", Doc: "nothing"},

	MOVI: {"movi", []Operand{dst(TI64, FA), src(TI64, FB)}, 0, "", "a = b"},
	MOVF: {"movf", []Operand{dst(TF64, FA), src(TF64, FB)}, 0, "", "a = b"},
	MOVR: {"movr", []Operand{dst(TRef, FA), src(TRef, FB)}, 0, "", "a = b (same object)"},
	LDI:  {"ldi", []Operand{dst(TI64, FA), {OImm, TI64, FD}}, 0, "", "a = sext(D)"},
	LDK:  {"ldk", []Operand{dst(TI64, FA), {OConstI, TI64, FD}}, 0, "", "a = kint[D]"},
	LDF:  {"ldf", []Operand{dst(TF64, FA), {OConstF, TF64, FD}}, 0, "", "a = kflt[D]"},
	LDS:  {"lds", []Operand{dst(TRef, FA), {OConstS, TRef, FD}}, tr, "", "a = handle(kstr[D]); traps if the heap limit is hit"},

	ADD:  {"add", rrI, 0, "", "a = b + c (wrapping)"},
	SUB:  {"sub", rrI, 0, "", "a = b - c (wrapping)"},
	MUL:  {"mul", rrI, 0, "", "a = b * c (wrapping)"},
	DIV:  {"div", rrI, tr, "", "a = b / c truncated; trap if c == 0 or (b == MIN and c == -1)"},
	REM:  {"rem", rrI, tr, "", "a = b % c (sign of b); trap if c == 0 or (b == MIN and c == -1)"},
	NEG:  {"neg", []Operand{dst(TI64, FA), src(TI64, FB)}, 0, "", "a = -b (wrapping)"},
	AND:  {"and", rrI, 0, "", "a = b & c"},
	OR:   {"or", rrI, 0, "", "a = b | c"},
	XOR:  {"xor", rrI, 0, "", "a = b ^ c"},
	SHL:  {"shl", rrI, 0, "", "a = b << (c & 63)"},
	SHR:  {"shr", rrI, 0, "", "a = b >>> (c & 63) (logical)"},
	SAR:  {"sar", rrI, 0, "", "a = b >> (c & 63) (arithmetic)"},
	ADDI: {"addi", riI, 0, "", "a = b + D (wrapping)"},
	SUBI: {"subi", riI, 0, "", "a = b - D (wrapping)"},
	MULI: {"muli", riI, 0, "", "a = b * D (wrapping)"},
	ANDI: {"andi", riI, 0, "", "a = b & D"},
	SHLI: {"shli", riI, 0, "", "a = b << (D & 63)"},
	SHRI: {"shri", riI, 0, "", "a = b >>> (D & 63)"},
	SARI: {"sari", riI, 0, "", "a = b >> (D & 63)"},

	EQ: {"eq", rrI, 0, "", "a = b == c"},
	NE: {"ne", rrI, 0, "", "a = b != c"},
	LT: {"lt", rrI, 0, "", "a = b < c (signed)"},
	LE: {"le", rrI, 0, "", "a = b <= c (signed)"},
	GT: {"gt", rrI, 0, "", "a = b > c (signed)"},
	GE: {"ge", rrI, 0, "", "a = b >= c (signed)"},

	FADD:  {"fadd", rrF, 0, "", "a = b + c"},
	FSUB:  {"fsub", rrF, 0, "", "a = b - c"},
	FMUL:  {"fmul", rrF, 0, "", "a = b * c"},
	FDIV:  {"fdiv", rrF, 0, "", "a = b / c (IEEE: ±Inf, NaN; never traps)"},
	FNEG:  {"fneg", []Operand{dst(TF64, FA), src(TF64, FB)}, 0, "", "a = -b"},
	FSQRT: {"fsqrt", []Operand{dst(TF64, FA), src(TF64, FB)}, 0, "", "a = sqrt(b) (NaN for b < 0)"},
	FLT:   {"flt", cmF, 0, "", "a = b < c (false if either is NaN)"},
	FLE:   {"fle", cmF, 0, "", "a = b <= c (false if either is NaN)"},
	FEQ:   {"feq", cmF, 0, "", "a = b == c (false if either is NaN)"},
	ITOF:  {"itof", []Operand{dst(TF64, FA), src(TI64, FB)}, 0, "", "a = float(b) (round to nearest even)"},
	FTOI:  {"ftoi", []Operand{dst(TI64, FA), src(TF64, FB)}, 0, "", "a = trunc(b) saturated to [MIN, MAX]; NaN -> 0"},

	JMP:  {"jmp", []Operand{{OTarget, 0, FD}}, FlagBranch | FlagJump, "", "pc = D"},
	JZ:   {"jz", []Operand{src(TI64, FA), {OTarget, 0, FD}}, FlagBranch, "", "if a == 0: pc = D"},
	JNZ:  {"jnz", []Operand{src(TI64, FA), {OTarget, 0, FD}}, FlagBranch, "", "if a != 0: pc = D"},
	JEQ:  {"jeq", brR, FlagBranch, "", "if a == b: pc = D"},
	JNE:  {"jne", brR, FlagBranch, "", "if a != b: pc = D"},
	JLT:  {"jlt", brR, FlagBranch, "", "if a < b: pc = D"},
	JLE:  {"jle", brR, FlagBranch, "", "if a <= b: pc = D"},
	JGT:  {"jgt", brR, FlagBranch, "", "if a > b: pc = D"},
	JGE:  {"jge", brR, FlagBranch, "", "if a >= b: pc = D"},
	JEQI: {"jeqi", brI, FlagBranch, "", "if a == BC: pc = D"},
	JNEI: {"jnei", brI, FlagBranch, "", "if a != BC: pc = D"},
	JLTI: {"jlti", brI, FlagBranch, "", "if a < BC: pc = D"},
	JLEI: {"jlei", brI, FlagBranch, "", "if a <= BC: pc = D"},
	JGTI: {"jgti", brI, FlagBranch, "", "if a > BC: pc = D"},
	JGEI: {"jgei", brI, FlagBranch, "", "if a >= BC: pc = D"},

	CALL:     {"call", win, sp | mt | tr, "", "call function D on window a..a+C-1; result in a; registers above a are clobbered"},
	RET:      {"ret", []Operand{{OSrc, 0, FA}}, sp | FlagTerminator, "", "return a (typed by the function's result)"},
	RETV:     {"retv", nil, sp | FlagTerminator, "", "return from a void function"},
	TAILCALL: {"tailcall", win, sp | mt | tr | FlagTerminator, "", "move a..a+C-1 to r0.. and replace this frame with function D"},

	NEWERR:  {"newerr", []Operand{dst(TRef, FA), src(TRef, FB)}, tr, "", "a = new error(kind \"Error\", message b)"},
	THROW:   {"throw", []Operand{src(TRef, FA)}, sp | mt | tr | FlagTerminator, "", "raise error a: innermost covering .try handler, else unwind to the caller"},
	ERRMSG:  {"errmsg", []Operand{dst(TRef, FA), src(TRef, FB)}, tr, "", "a = message of error b"},
	ERRKIND: {"errkind", []Operand{dst(TRef, FA), src(TRef, FB)}, tr, "", "a = kind of error b (\"Error\", \"TaskError\", \"ResourceError\", ...)"},

	SLEN:    {"slen", []Operand{dst(TI64, FA), src(TRef, FB)}, tr, "", "a = len(string b)"},
	SCONCAT: {"sconcat", []Operand{dst(TRef, FA), src(TRef, FB), src(TRef, FC)}, tr | FlagBulk, "", "a = b ++ c (new string)"},
	SEQ:     {"seq", []Operand{dst(TI64, FA), src(TRef, FB), src(TRef, FC)}, tr | FlagBulk, "", "a = string b == string c"},
	ITOS:    {"itos", []Operand{dst(TRef, FA), src(TI64, FB)}, tr, "", "a = decimal(b)"},
	STOB:    {"stob", []Operand{dst(TRef, FA), src(TRef, FB)}, tr | FlagBulk, "", "a = bytes(copy of string b)"},
	BTOS:    {"btos", []Operand{dst(TRef, FA), src(TRef, FB)}, tr | FlagBulk, "", "a = string(copy of bytes b)"},

	BNEW:   {"bnew", []Operand{dst(TRef, FA), src(TI64, FB)}, tr | FlagBulk, "", "a = new zeroed bytes[b]"},
	BLEN:   {"blen", []Operand{dst(TI64, FA), src(TRef, FB)}, tr, "", "a = len(bytes b)"},
	BGET:   {"bget", []Operand{dst(TI64, FA), src(TRef, FB), src(TI64, FC)}, tr, "", "a = b[c]"},
	BSET:   {"bset", []Operand{src(TRef, FA), src(TI64, FB), src(TI64, FC)}, tr, "", "a[b] = c & 255"},
	BCOPY:  {"bcopy", []Operand{src(TRef, FA), src(TI64, FB), src(TRef, FC), src(TI64, FD0), src(TI64, FD1)}, tr | FlagBulk, "", "copy c[D0:D0+D1] to a[b:b+D1] (memmove)"},
	BSLICE: {"bslice", []Operand{dst(TRef, FA), src(TRef, FB), src(TI64, FC), src(TI64, FD0)}, tr | FlagBulk, "", "a = new bytes(copy of b[c:D0])"},
	BFIND:  {"bfind", []Operand{dst(TI64, FA), src(TRef, FB), src(TRef, FC), src(TI64, FD0)}, tr | FlagBulk, "", "a = first index >= D0 of needle c in b, or -1"},
	BEQ:    {"beq", []Operand{dst(TI64, FA), src(TRef, FB), src(TRef, FC)}, tr | FlagBulk, "", "a = bytes b == bytes c"},

	ANEW:  {"anew", []Operand{dst(TRef, FA), src(TI64, FB), {OElemType, 0, FC}}, tr | FlagBulk, "", "a = new array[b] of element type C"},
	ALEN:  {"alen", []Operand{dst(TI64, FA), src(TRef, FB)}, tr, "", "a = len(array b)"},
	AGETI: {"ageti", []Operand{dst(TI64, FA), src(TRef, FB), src(TI64, FC)}, tr, "", "a = b[c] (i64 array)"},
	AGETF: {"agetf", []Operand{dst(TF64, FA), src(TRef, FB), src(TI64, FC)}, tr, "", "a = b[c] (f64 array)"},
	AGETR: {"agetr", []Operand{dst(TRef, FA), src(TRef, FB), src(TI64, FC)}, tr, "", "a = b[c] (ref array; may be null)"},
	ASETI: {"aseti", []Operand{src(TRef, FA), src(TI64, FB), src(TI64, FC)}, tr, "", "a[b] = c (i64 array)"},
	ASETF: {"asetf", []Operand{src(TRef, FA), src(TI64, FB), src(TF64, FC)}, tr, "", "a[b] = c (f64 array)"},
	ASETR: {"asetr", []Operand{src(TRef, FA), src(TI64, FB), src(TRef, FC)}, tr, "", "a[b] = c (ref array)"},

	SPAWN:     {"spawn", win, in | mt | tr, "task.spawn", "a = handle of a new task running function D with args a..a+C-1 (copied/moved across); with B = 1 (detached) no handle is made and no register changes"},
	JOINI:     {"joini", []Operand{dst(TI64, FA), src(TRef, FB)}, in | mt | tr, "task.join_i64", "wait for task b; a = its i64 value"},
	JOINF:     {"joinf", []Operand{dst(TF64, FA), src(TRef, FB)}, in | mt | tr, "task.join_f64", "wait for task b; a = its f64 value"},
	JOINR:     {"joinr", []Operand{dst(TRef, FA), src(TRef, FB)}, in | mt | tr, "task.join_ref", "wait for task b; a = its ref value (copied in)"},
	JOINV:     {"joinv", []Operand{src(TRef, FA)}, in | mt | tr, "task.join_void", "wait for task a; its value is dropped"},
	OUTCOME:   {"outcome", []Operand{dst(TI64, FA), src(TRef, FB)}, in | mt | tr, "task.outcome", "wait for task b; a = 0 Success, 1 Failure, 2 Trap, 3 Cancelled"},
	YIELD:     {"yield", nil, in, "task.yield", "requeue behind other runnable tasks"},
	CANCEL:    {"cancel", []Operand{src(TRef, FA)}, in | mt | tr, "task.cancel", "request cancellation of task a (sticky)"},
	CANCELLED: {"cancelled", []Operand{dst(TI64, FA)}, in, "task.cancelled", "a = 1 if this task was asked to cancel, else 0"},
	EVNEW:     {"evnew", []Operand{dst(TRef, FA)}, in | tr, "event.new", "a = new auto-reset event"},
	EVWAIT:    {"evwait", []Operand{src(TRef, FA)}, in | mt | tr, "event.wait", "wait until event a is signalled (consumes the signal)"},
	EVSIGNAL:  {"evsignal", []Operand{src(TRef, FA)}, in | tr, "event.signal", "wake one waiter of a, or keep the signal"},
	EVBCAST:   {"evbcast", []Operand{src(TRef, FA)}, in | tr, "event.broadcast", "wake every waiter of a"},

	INTR: {"intr", []Operand{{OWindow, 0, FA}, {OIntr, 0, FD}}, in | mt | tr, "", "call intrinsic import D on window a..a+C-1; result (if any) in a"},

	FREE: {"free", []Operand{src(TRef, FA)}, tr, "", "release object a; its handles become stale (later use traps)"},

	BFINDR:   bytesOps[0],
	BCMP:     bytesOps[BCMP-BFINDR],
	BCASECMP: bytesOps[BCASECMP-BFINDR],
	BTOI:     bytesOps[BTOI-BFINDR],
	STOI:     bytesOps[STOI-BFINDR],
	ITOB:     bytesOps[ITOB-BFINDR],
	LDB:      bytesOps[LDB-BFINDR],
}

// Info returns the ISA table row of op. ok is false for undefined opcodes.
func (op Op) Info() (info *OpInfo, ok bool) {
	if int(op) >= len(opTable) || opTable[op].Name == "" {
		return nil, false
	}
	return &opTable[op], true
}

func (op Op) String() string {
	if info, ok := op.Info(); ok {
		return info.Name
	}
	return fmt.Sprintf("op(%d)", uint8(op))
}

// OpByName returns the opcode with the given mnemonic.
func OpByName(name string) (Op, bool) {
	op, ok := opByName[name]
	return op, ok
}

var opByName = func() map[string]Op {
	m := make(map[string]Op, len(opTable))
	for i := range opTable {
		if opTable[i].Name != "" {
			m[opTable[i].Name] = Op(i)
		}
	}
	return m
}()

func init() {
	if len(opTable) != NumOps {
		panic("vmloop: ISA table and opcode enumeration disagree")
	}
}
