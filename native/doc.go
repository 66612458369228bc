// Package native is a C twin of the Jade VM's Go interpreter loop
// (vmloop.Exec.Run): the same verified bytecode, run on the same memory,
// with the same reductions, safe points and results, dispatching by
// computed goto. Importing the package turns it on for every task; the Go
// loop stays the reference and runs everything the C loop does not.
//
// # What runs in C
//
// loop.c executes the hot subset of the ISA (docs/ISA.md), opcodes nop to
// tailcall except lds:
//
//   - constants and moves: ldi ldk ldf movi movf movr;
//   - i64 arithmetic, logic and comparisons: add sub mul div rem neg and or
//     xor shl shr sar addi subi muli andi shli shri sari eq ne lt le gt ge;
//   - f64: fadd fsub fmul fdiv fneg fsqrt flt fle feq itof ftoi;
//   - every branch, the fused compare-and-branch forms included: jmp jz jnz
//     jeq jne jlt jle jgt jge jeqi jnei jlti jlei jgti jgei;
//   - call, ret, retv and tailcall within the program, pushing and popping
//     frames on the task's frame stack.
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
// merge the 62 dispatch jumps into about 6; -fno-crossjumping is not in
// cgo's flag allow-list, so jn_run asks for it with a GCC-only function
// attribute. The cgo flags are -O2 and -lm only.
//
// # Reductions and preemption
//
// Every instruction costs 1, charged before it runs. After the control
// transfer of a taken backward branch (target <= its own pc), a call, a
// tailcall and a ret/retv to a caller, the loop returns to Go
// (vmloop.NativePreempted) when the budget is spent (<= 0) or the task's
// stop flag is set; the flag (the uint32 inside the atomic.Bool) is read,
// with an acquire load, only when the budget is not spent, exactly as the
// Go loop does. The saved pc is the next instruction to run.
//
// # Exits to Go
//
// On every other exit the loop returns vmloop.NativeExit with frames[fp].pc
// AT the instruction, not yet charged. vmloop then charges it, runs it with
// the Go loop's own out-of-line step (so every trap, message and trap pc
// comes from the Go code) and calls the C loop again. The exits are:
//
//   - any opcode outside the hot subset: lds, errors and throw, strings,
//     byte buffers (bget bset blen ...), arrays, allocation, bulk
//     operations, intrinsics (builtins and intr), free;
//   - div and rem with a zero divisor or MIN / -1 (Go traps);
//   - call when the frame stack is full (Go grows it), at the depth limit
//     Limits.MaxFrames (Go traps: stack overflow), or when the register
//     stack is too small for the callee's frame (Go grows it);
//   - ret and retv of the entry function (Go finishes the task and copies
//     the result out);
//   - tailcall when the register stack is too small for the new frame: Go
//     grows it and re-enters C at the same tailcall (nothing is run in Go).
//
// # Handle operations: the region rule (measured)
//
// Handle operations (bget, blen, slen, array access ...) touch the task
// heap, whose objects hold Go pointers ([]byte, strings), so C could only
// read them through pinned memory or a second, C-side copy of the tables.
// Instead the C loop exits on them, and the choice was measured on a
// byte-scanning loop (BenchmarkParse): with one cgo crossing per bget the
// C loop was 5-8x slower than the Go loop (about 60 ns per bget). So a
// call into C that exits at an instruction outside the hot subset after
// fewer than 32 reductions (vmloop.SetNativeFallback) hands the rest of its
// Run slice to the Go loop, whose inline paths run those instructions
// without a crossing; the next slice starts in C again. Exit-dense regions
// thus run at Go-loop speed and compute-dense ones in C. Both loops have
// the same semantics, so the rule changes only speed, and the differential
// tests run with the rule off (everything possible in C) and on.
//
// # Memory sharing and the cgo pointer rules
//
// The C loop works on the task's own register stack ([]uint64: i64 values,
// f64 bit patterns and handles, no Go pointers) and frame stack ([]frame,
// three int64 each), and on the program flattened once per program
// (vmloop.Program.Native: every function's code, the KInt and KFlt pools
// in one []uint64, and a []int64 of {code offset, nregs, nparams} per
// function). Their first-element pointers are passed as call arguments
// only, C keeps no copy of them after the call, and the in/out scalars
// live in a struct on the Go stack; `#cgo noescape` and `#cgo nocallback`
// on jn_run keep that struct from escaping (no allocation per call). The
// C loop never grows anything: growth is an exit, so the slices it was
// given stay valid for the whole call.
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
// The differential tests (diff_test.go, native_test.go) run every program
// as two tasks, one per loop, in lockstep with the same budgets and the
// same answers to intrinsic requests, and compare after every Run the
// signal, the function and pc, the budget left and the total reductions
// (so every preemption point), the pending request, and at the end the
// result, thrown error, trap (code, message, function, pc) and heap bytes.
// Programs: fib, a loop, a parse loop, tail calls, a frame bigger than the
// register stack, try/throw with intrinsic calls, arithmetic edge cases
// (MIN/-1, x/0, shifts by 64/65/-1, ftoi of NaN/±Inf/1e300), the call
// depth limit, Stop, the assembler's and the examples' .jasm programs, and
// random verified programs (TestRandomDiff and FuzzNative: go test -fuzz
// FuzzNative ./native), which report opcode coverage. sanitize/driver.c
// runs loop.c alone under AddressSanitizer and UndefinedBehaviorSanitizer.
package native
