// Package vmloop is the Jade virtual machine: the ISA (isa.go, described in
// docs/ISA.md), the program model and its binary form, the verifier, the
// interpreter loop, the task heap and the values that cross its boundary.
// It imports nothing of this module but the hook table internal/vmhook:
// it knows no scheduler, no worker and no cgo. Package sched drives it,
// package native plugs a C twin of its loop into it, and package
// vmloop/jasm assembles programs for it. Like every package of the design
// card below the root package, it is an implementation package with no
// compatibility promise of its own.
//
// # Programs
//
// A [Program] is a set of functions of typed registers plus its constant
// and intrinsic tables. [Verify] checks every rule of the ISA once, at
// load (types of every register at every pc, operand ranges, branch
// targets, the intrinsic signatures against a resolver: the bus's central
// table and its host intrinsics), so the loop checks nothing a verified
// program cannot break, and a rejection is a [VerifyError] naming the
// function and pc. A program is immutable once verified and is shared by
// every task that runs it.
//
// # The Exec and who owns it
//
// An [Exec] is the execution state of one task: its register and frame
// stacks, its heap, the pending intrinsic request, and the outcome once the
// task ends. [NewExec] (or [Exec.Reset] on a recycled one) starts it at a
// function with its arguments. One goroutine drives an Exec at a time: the
// worker running the task; only [Exec.Stop] and [Exec.ClearStop] may be
// called from elsewhere while it runs. Between two runs the task's owner is
// the scheduler, which parks, moves and resumes it; when the task has
// completed, [Exec.Recycle] keeps its memory for the next task and nothing
// may be read through it again.
//
// # Running: signals, safe points, preemption
//
// [Exec.Run] runs the task for a budget of reductions and returns a
// [Signal]: completed, thrown, trapped, preempted, or stopped at an
// intrinsic. Every instruction costs one reduction, and a bulk instruction
// one more per 64 bytes (or per chunk of a cycle check) of the work it
// does. The loop looks at the budget only at safe points: after a taken
// backward branch, a CALL, a TAILCALL, a return to a caller and a caught
// THROW, and after every chunk of a bulk instruction. There, with the
// budget spent or Stop called, Run returns SigPreempted with the pc at the
// next instruction (or still at the bulk instruction, which resumes where
// it stopped). So a loop without a call is preempted at its back edge, and
// no task holds a worker for more than its budget plus one chunk. An
// intrinsic that needs the scheduler returns SigIntrinsic whatever the
// budget, with [Exec.Request] describing it; the caller completes it
// ([Exec.Complete], [Exec.Raise], [Exec.SetTrap]) now or after a wait,
// and calls Run again. The loop answers the others itself
// ([Intrinsic.InVM]: the map and http families, time.now, chan.closed),
// and time.timeout, event.signal, event.wait, spawn and the joins of
// inline results too for a scheduler's task record, through the
// scheduler's hooks (vm_rows.go); a wait armed there returns [SigWait].
// A task record's yield is no request: Run returns [SigYield] past it,
// and the scheduler charges and requeues the task as it would answer the
// request.
// Throws stop at the task boundary: a throw that escapes the entry
// function is SigThrown, never a Go panic, and a fault is a trap
// (SigTrapped, [TrapCode]).
//
// # The native hook
//
// Run is pure Go. A package with a native loop (package native, cgo,
// computed goto) registers it through internal/vmhook (vmhook.SetLoop);
// Run then hands each slice to it first. The native loop runs the hot
// subset of the ISA on the task's own register and frame stacks, which
// hold no Go pointers, with the same reduction rule and the same safe
// points, and comes back either preempted or at an instruction it does not
// run, which Run executes with its own step before calling it again. The
// semantics of everything outside the hot subset live once, in Go
// (native_hook.go has the protocol and the cgo pointer rules). A task can
// opt out with [Exec.SetNative]; the jadecheck build never uses it.
//
// # The heap and handles
//
// Every task owns one heap: a table of objects (strings, byte buffers,
// arrays, errors, and the scheduler's tasks, events and host objects)
// named by handles. A handle is a checked 64-bit word in a ref register:
// an index, the generation of its slot and the id of the heap's owner, so
// a stale, foreign or mistyped handle traps (TrapHandle) and can never
// reach another object. Objects never leave their heap: every boundary
// (spawn arguments, join results, thrown errors, intrinsic arguments and
// results, channel messages) copies through a [Value], and the heap
// counts what it holds against the task's MaxHeapBytes and its engine's
// shared memory [Budget]. The heap's tables are pooled by size class and
// handed back only when the heap is freed (heap.go). A ref register that
// names a task or an event holds a shared reference, not a handle: a slot
// of one table shared by every heap, the kind and the slot's generation,
// held by one heap (taskref.go), so a spawn's result costs no heap object
// and an event (event.new's, or one a spawn's argument brings in) no heap
// object or handle table, only its accounted bytes; a freed reference, or
// one whose holder ended, is stale like a freed handle, and one of the
// other kind is a handle of the wrong kind. The scheduler learns
// of the references that name a task through vmhook.TaskRefs and
// vmhook.TaskDrop (and counts a spawn's own: Exec.CompleteTask), which
// keep task records alive while a reference names them.
//
// # Compatibility
//
// This is an implementation package of the Jade runtime, with no
// compatibility promise between versions: its API changes whenever the
// runtime needs it to. A Go host imports the root package,
// github.com/jadevm/jade, whose API and program model are what the
// module's version promises.
package vmloop
