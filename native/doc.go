// Package native is a C twin of the Jade VM's Go interpreter loop
// (vmloop.Exec.Run): the same verified bytecode, run on the same memory,
// with the same reductions, safe points and results, dispatching by
// computed goto. Importing the package turns it on for every task; the Go
// loop stays the reference and runs everything the C loop does not.
//
// # What runs in C
//
// loop.c executes the hot subset of the ISA (docs/ISA.md), opcodes nop to
// tailcall except lds, plus blen bget bset and the bounded byte primitives
// of ABI 1.3 but stoi and ldb:
//
//   - constants and moves: ldi ldk ldf movi movf movr;
//   - i64 arithmetic, logic and comparisons: add sub mul div rem neg and or
//     xor shl shr sar addi subi muli andi shli shri sari eq ne lt le gt ge;
//   - f64: fadd fsub fmul fdiv fneg fsqrt flt fle feq itof ftoi;
//   - every branch, the fused compare-and-branch forms included: jmp jz jnz
//     jeq jne jlt jle jgt jge jeqi jnei jlti jlei jgti jgei;
//   - call, ret, retv and tailcall within the program, pushing and popping
//     frames on the task's frame stack;
//   - bfindr (a needle of at most 16 bytes), bcmp, bcasecmp, btoi and itob
//     on the byte buffers Go has handed to this call, when the Go loop
//     would do them in one chunk (64 KiB) without a trap (jn_bytes.h);
//   - blen, bget and bset on the byte buffers Go has handed to this call
//     (see "Handle operations" below).
//
// It runs the program as jn_prepare made it once per program (kept in
// vmhook.Program.Ext): two words per instruction, at the
// instruction's pc, a handler word (the address of the code in jn_run that
// runs it; the dispatch of every handler is one load and one indirect
// jump) and an operand word (the instruction word). Each function's code
// is preceded by its index and register count. A call's operand word holds
// the offset of the callee's code instead of its index (callx), so a call
// needs no table lookup, and a branch's holds 16 × (target pc + 1). The
// loop keeps the pc as a byte offset from the current function's code (16
// × pc), not as a pointer to the slot, and that operand is the pc once
// the target's slot is dispatched: a taken branch and the dispatch after
// it cost one load (the operand) and no arithmetic on the chain from one
// instruction to the next (the loads use base + index addressing). With a
// pointer, each taken branch added a shift and two adds to that chain, and
// the branch-dense loops ran slower (BenchmarkParse; figures in
// docs/PERFORMANCE.md, "The VM loop"). A function of more than
// about 2^27 instructions, too long for that encoding, keeps its target
// pcs, runs them with handlers of their own and has no superinstructions.
// The handler of an instruction may be a superinstruction, which runs it
// and what follows as one handler:
//
//   - a mov, ldi, add, sub, addi, subi or bget followed, in the same
//     function, by a branch, call or ret;
//   - a branch whose forward target is a ret: taken, it runs that ret;
//   - a jmp whose target is a conditional branch (a loop's back edge to its
//     test), alone or after an add, sub, addi or subi: it runs the branch
//     at the target after the jmp's own safe point.
//
// The later instruction keeps its own handler word, so a branch to it runs
// it alone. Each part is charged as it starts and can exit or preempt
// exactly as when run alone, so reductions, safe points and exit pcs do
// not change.
//
// # Frames
//
// The frame stack is vmloop's ({fn, pc, base}), shared with the Go loop.
// Within one call into C, a call stores in the caller's frame, in place of
// its function index, ~(offset of its code in the prepared program), a
// negative number, and in place of its return pc, 16 × that pc, so that
// ret finds the caller's code and pc with one load each (a frame that
// still holds an index, one pushed by Go, is looked up in the function
// table and holds its pc as Go does). The current frame's function and pc
// are kept in registers. Before it returns to Go, the C loop writes the
// current frame's index and pc and turns every negative fn back into an
// index and its pc back into a pc (those frames are contiguous just below
// the current one; their number is at most the calls made in this call
// into C), so Go only ever sees its own form.
//
// The arithmetic has no undefined behaviour and needs no compiler flag:
// i64 values are computed on uint64_t (wrapping), signed views avoid even
// implementation-defined conversions, div and rem test the zero divisor
// and MIN / -1 before dividing, shift counts are masked to 6 bits, sar is
// written with unsigned shifts, ftoi saturates with NaN -> 0, fneg flips
// the sign bit as Go does, and clang is told not to contract fmul+fadd
// (GCC does not contract without FMA in the target). Dispatch is threaded
// (labels as values, one indirect jump per handler) under GCC and Clang,
// and a switch elsewhere (or with -DJN_NO_GOTO). GCC's cross-jumping would
// merge the ~200 dispatch jumps into a few; -fno-crossjumping is not in
// cgo's flag allow-list, so jn_run asks for it with a GCC-only function
// attribute; jn_run is also kept from being inlined or cloned, since the
// addresses of its labels are stored in prepared programs (valid in this
// process only). The cgo flags are -O2 and -lm only.
//
// # Reductions and preemption
//
// Every instruction costs 1, charged before it runs. After the control
// transfer of a taken backward branch (target <= its own pc), a call, a
// tailcall and a ret/retv to a caller, the loop returns to Go
// (vmhook.Preempted) when the budget is spent (<= 0) or the task's
// stop flag is set; the flag (the uint32 inside the atomic.Bool) is read,
// with an acquire load, only when the budget is not spent, exactly as the
// Go loop does. The saved pc is the next instruction to run.
//
// # Exits to Go
//
// On every other exit the loop returns vmhook.Exit with frames[fp].pc
// AT the instruction, not yet charged. vmloop then charges it, runs it with
// the Go loop's own out-of-line step (so every trap, message and trap pc
// comes from the Go code) and calls the C loop again. The exits are:
//
//   - any opcode outside the hot subset: lds, errors and throw, strings,
//     byte buffer operations other than blen bget bset bfindr bcmp
//     bcasecmp btoi itob, arrays,
//     allocation, bulk operations, intrinsics (builtins and intr), free;
//   - blen, bget and bset on a handle that is not in the call's table of
//     buffers (Go adds the buffer when the handle names a live one and
//     calls C again at the same instruction, without charging it; else Go
//     runs it and traps), and bget and bset with an index out of range
//     (Go traps); the same for the buffers of bfindr, bcmp, bcasecmp, btoi
//     and itob, which also exit on a range out of bounds or longer than a
//     chunk, a longer needle, or digits that do not fit (Go traps or runs
//     the instruction in chunks);
//   - div and rem with a zero divisor or MIN / -1 (Go traps);
//   - call when the frame stack is full (Go grows it), at the depth limit
//     Limits.MaxFrames (Go traps: stack overflow), or when the register
//     stack is too small for the callee's frame (Go grows it);
//   - ret and retv of the entry function (Go finishes the task and copies
//     the result out);
//   - tailcall when the register stack is too small for the new frame: Go
//     grows it and re-enters C at the same tailcall (nothing is run in Go).
//
// # Handle operations: byte buffers in C, the region rule for the rest
//
// Handle operations (bget, blen, slen, array access ...) touch the task
// heap, whose objects hold Go pointers ([]byte, strings), so C cannot read
// the heap itself. An exit per instruction costs a cgo crossing, and a
// bget per byte made the C loop slower than the Go loop (BenchmarkParse;
// figures in docs/PERFORMANCE.md, "The VM loop"). So byte buffers get a table:
// vmhook.Bufs, up to 4 {handle, pointer, length} entries per call
// into C. When C exits on a blen, bget or bset whose handle is not in the
// table and names a live byte buffer, Go pins the buffer (runtime.Pinner),
// adds it (replacing the oldest entry when full) and calls C again at the
// same instruction; from then on C runs those instructions on that buffer
// itself, with the Go loop's bounds check. The table is emptied before Go
// runs any instruction itself (any of them could free or replace a
// buffer) and at the end of the slice, when the buffers are unpinned. So a
// handle found in the table names exactly what the Go loop's heap check
// would find; a bad handle or index exits and traps in Go. Parse-style
// loops (BenchmarkParse) now run entirely in C.
//
// Other handle operations (strings, arrays) still exit. A call into C that
// exits at an instruction outside the hot subset after fewer than 32
// reductions (vmhook.SetFallback) hands the rest of its Run slice to
// the Go loop, whose inline paths run those instructions without a
// crossing; the next slice starts in C again. Exit-dense regions thus run
// at Go-loop speed and compute-dense ones in C. Both loops have the same
// semantics, so the rule changes only speed, and the differential tests
// run with the rule off (everything possible in C) and on.
//
// # Memory sharing and the cgo pointer rules
//
// The C loop works on the task's own register stack ([]uint64: i64 values,
// f64 bit patterns and handles, no Go pointers) and frame stack ([]frame,
// three int64 each), and on the program flattened once per program
// (vmloop.vmloop's nativeProgram: every function's code, the KInt and KFlt pools
// in one []uint64, and a []int64 of {code offset, nregs, nparams} per
// function) and prepared once by jn_prepare (a []uint64 of handler
// addresses, operand words, the pools and a function table of code
// offsets: no Go pointers; see above). Their
// first-element pointers are passed as call arguments only, C keeps no
// copy of them after the call, and the in/out scalars live in a struct on
// the Go stack; `#cgo noescape` and `#cgo nocallback` on jn_run keep that
// struct from escaping (no allocation per call). The table of byte buffers
// is an allocation of its own holding only pinned Go pointers (the cgo
// check covers the whole allocation an argument points into); it comes
// from a sync.Pool, so the steady state allocates nothing either. The C
// loop never grows anything: growth is an exit, so the slices it was given
// stay valid for the whole call.
//
// # Selection
//
// The C loop is compiled in with cgo on 64-bit platforms and is left out
// with CGO_ENABLED=0, with the build tag purego and on 32-bit platforms;
// there this package builds from a pure-Go file, Available reports false
// and nothing is registered. The vmloop jadecheck build never uses it
// (its register type tags live in the Go loop). Where it is available:
//
//   - importing this package registers it (init), unless the environment
//     variable JADE_NATIVE=0 is set;
//   - Enable and Disable switch it for the whole process;
//   - vmloop.Exec.SetNative(false) keeps one task on the Go loop (an
//     engine option maps onto it); Exec.NativeUsed reports the choice.
//
// # Proof of identity
//
// The differential tests (diff_test.go, programs_diff_test.go,
// bufs_diff_test.go) run every program as two tasks, one per loop, in
// lockstep with the same budgets and the same answers to intrinsic
// requests, and compare after every Run the signal, the function and pc,
// the budget left and the total reductions (so every preemption point),
// the pending request, and at the end the result, thrown error, trap
// (code, message, function, pc) and heap bytes.
// Programs: fib, a loop, a parse loop, tail calls, a frame bigger than the
// register stack, try/throw with intrinsic calls, six byte buffers in turn
// (more than the table holds) and the traps of buffers (index out of
// range, freed, null), arithmetic edge cases
// (MIN/-1, x/0, shifts by 64/65/-1, ftoi of NaN/±Inf/1e300), the call
// depth limit, Stop, the assembler's and the examples' .jasm programs, and
// random verified programs (TestRandomDiff and FuzzNative: go test -fuzz
// FuzzNative ./native), which report opcode coverage. sanitize/driver.c
// runs loop.c alone under AddressSanitizer and UndefinedBehaviorSanitizer.
//
// # Compatibility
//
// This is an implementation package of the Jade runtime, with no
// compatibility promise between versions: its API changes whenever the
// runtime needs it to. A Go host imports the root package,
// github.com/jadevm/jade, whose API and program model are what the
// module's version promises.
package native
