// Package vmhook holds the plumbing between the VM (package vmloop) and
// the packages that plug into it from below the embedding API: the native
// twin of the interpreter loop (package native) and the scheduler's task
// reference hook (package sched). It is internal: a host embedding the
// runtime never sees it. vmloop's native_hook.go explains the protocol of
// the native loop.
package vmhook

import (
	"sync/atomic"
	"unsafe"
)

// Exit codes returned by a Loop.
const (
	// Exit: the instruction at frames[fp].pc must run in Go. It has not
	// been charged. Left and FP are up to date.
	Exit = 1
	// Preempted: a safe point with the budget spent (Left <= 0) or the
	// stop flag set; frames[fp].pc is the next instruction to run.
	Preempted = 2
)

// Call is the state a Loop runs on. The pointers are valid for the
// duration of the call only and point to memory without Go pointers.
type Call struct {
	Regs      unsafe.Pointer // &regs[0]: the register stack, NRegs uint64 slots
	NRegs     int            // len(regs)
	Frames    unsafe.Pointer // &frames[0]: NFrames frames of three int64 {fn, pc, base}
	NFrames   int            // len(frames)
	FP        int            // index of the current frame
	MaxFrames int            // Limits.MaxFrames: a CALL to depth >= MaxFrames exits
	Left      int64          // budget left
	Stop      unsafe.Pointer // *uint32: nonzero when Stop was called (read at safe points)
	Prog      *Program
	// Bufs is nil or a *Bufs: byte buffers of the task heap that the
	// loop may read and write directly (see Bufs). It exits on those
	// instructions for any other handle.
	Bufs unsafe.Pointer
}

// BufSlots is the capacity of a Bufs table.
const BufSlots = 4

// Buf is one byte buffer of the task heap: the handle that names it and
// its contents (P points to N bytes, pinned; nil when N is 0).
type Buf struct {
	H uint64
	P unsafe.Pointer
	N int64
}

// Bufs is the table of byte buffers a Loop may access directly during one
// call (vmloop fills it on the loop's exits and drops it before it runs
// anything itself; see native_hook.go). The buffers are pinned while they
// are in the table, and the table holds no other Go pointers.
type Bufs struct {
	N int64 // slots in use
	B [BufSlots]Buf
}

// Result is what a Loop returns: the exit code and the new frame index
// and budget (frames[FP].pc is saved in the frame stack).
type Result struct {
	Exit int
	FP   int
	Left int64
}

// Loop runs the hot subset of the ISA from frames[FP].pc; see Exit and
// Preempted.
type Loop func(c Call) Result

// Program is a program flattened for a Loop, made once per verified
// program by vmloop and immutable afterwards. It holds no Go pointers.
type Program struct {
	// Words holds the code of every function, one instruction word each,
	// then the KInt pool, then the KFlt pool as bit patterns, then one
	// padding word (so that &Words[KIntOff] is valid when the pools are
	// empty).
	Words []uint64
	// Funcs holds FuncWords int64 per function: the offset of its code in
	// Words, its NRegs and its number of parameters.
	Funcs   []int64
	KIntOff int // offset of KInt in Words
	KFltOff int // offset of KFlt in Words

	// Ext is the loop's own form of the program (package native keeps its
	// prepared code there), made from the fields above on first use and
	// set once; vmloop never reads it.
	Ext atomic.Pointer[[]uint64]
}

// FuncWords is the number of int64 per function in Program.Funcs.
const FuncWords = 3

var loop atomic.Pointer[Loop]

// SetLoop registers the native loop that vmloop's Run uses for every task
// that did not opt out; nil unregisters it. Package native calls it at
// init and from Enable/Disable.
func SetLoop(f Loop) {
	if f == nil {
		loop.Store(nil)
		return
	}
	loop.Store(&f)
}

// Current returns the registered loop, or nil.
func Current() Loop {
	if p := loop.Load(); p != nil {
		return *p
	}
	return nil
}

// LoopSet reports whether a native loop is registered.
func LoopSet() bool { return loop.Load() != nil }

// Unsupported is set by vmloop's jadecheck build, whose register type
// tags only the Go loop keeps: no native loop may run then.
var Unsupported bool

// DefaultFallback is the default of SetFallback.
const DefaultFallback = 32

var fallback atomic.Int64

func init() { fallback.Store(DefaultFallback) }

// SetFallback sets the region rule of the native loop: when a call into
// it runs fewer than n reductions before it exits to Go at an instruction
// outside the hot subset, the rest of that Run slice runs in the Go loop;
// n <= 0 never falls back (the tests use it to keep a whole run in C).
// Both loops have the same semantics, so the rule changes only speed.
func SetFallback(n int) { fallback.Store(int64(n)) }

// Fallback returns the region rule's n.
func Fallback() int64 { return fallback.Load() }

// TaskRefs is told about the heap objects that name a task: +1 when one
// is made, -1 when it is freed or its heap dropped (vmloop calls it; the
// scheduler sets it at init to know when a task record can be reused).
var TaskRefs func(task any, delta int)

// TaskDrop, when set, is told in place of TaskRefs(task, -1) that the heap
// of holder, a *vmloop.Exec that the scheduler marked as its task
// record's (Exec.MarkTaskRecord), dropped a task reference (a FREE, or
// the heap freed): the scheduler recycles a record whose last reference
// that was on the worker running holder, without a shared pool.
var TaskDrop func(task any, holder any)

var clock atomic.Pointer[func() int64]

// SetClock makes the VM loop's time.now read f instead of the master
// clock (internal/monoclock); nil restores the master clock. The
// differential tests of the two loops give both the same time with it,
// as they give both the same answer to a request.
func SetClock(f func() int64) {
	if f == nil {
		clock.Store(nil)
		return
	}
	clock.Store(&f)
}

// Clock returns the clock SetClock set, or nil for the master clock.
func Clock() func() int64 {
	if f := clock.Load(); f != nil {
		return *f
	}
	return nil
}

// SetTimeout, when set, answers time.timeout in the VM loop for holder,
// a *vmloop.Exec that the scheduler marked as its task record's
// (Exec.MarkTaskRecord): it sets the one-shot timeout of the task's next
// wait to d ns and returns true, or returns false (nothing set) when the
// scheduler must answer the request itself (the task's engine has no
// timer wheel, and time.timeout throws).
var SetTimeout func(holder any, d int64) bool

// Signal, when set, answers event.signal in the VM loop for holder, a
// *vmloop.Exec that the scheduler marked as its task record's
// (Exec.MarkTaskRecord) and running on the calling worker: it wakes one
// waiter of ev, the object of an event handle of holder's heap, or keeps
// the signal, and returns true; it returns false (nothing done) when the
// scheduler must answer the request itself.
var Signal func(holder any, ev any) bool

// What Wait did.
const (
	WaitRequest = iota // nothing: the scheduler answers the request
	WaitDone           // a kept signal was taken: the task goes on
	WaitArmed          // the wait is registered: the task must park
)

// Wait, when set, answers event.wait in the VM loop for holder (as
// Signal): it takes ev's kept signal (WaitDone) or arms the task's wait
// and registers it with ev (WaitArmed: the loop stops with
// vmloop.SigWait, and the scheduler parks the task and resumes its
// request as it would after its own answer), or does nothing
// (WaitRequest) when the wait needs the scheduler's request: a one-shot
// timeout bounds it.
var Wait func(holder any, ev any) int

// What Spawn did.
const (
	SpawnRequest = iota // nothing: the scheduler answers the request
	SpawnDone           // the child is launched, its handle in the destination
	SpawnTrapped        // the child is launched; the spawner traps (its trap is set)
)

// Spawn, when set, answers a spawn in the VM loop for holder, a
// *vmloop.Exec that the scheduler marked as its task record's and running
// on the calling worker, stopped at its spawn request: it makes and
// launches the child as the request's answer would, completes the
// request and returns what it did and the reductions it costs beside the
// copies of its arguments (Exec.TakeCopyCharge); SpawnRequest (nothing
// done, or a copy of the arguments to go on with) leaves the request to
// the scheduler.
var Spawn func(holder any) (cost int64, did int)

// What Join did.
const (
	JoinRequest = iota // nothing: the scheduler answers the request
	JoinDone           // the target's inline result is returned
)

// Join, when set, answers a join in the VM loop for holder (as Spawn),
// stopped at its join request of target, the object of a task reference
// of holder's heap, with left reductions of its slice left: when target
// has completed with a void, i64 or f64 result, or completes in a run of
// it first within holder's slice (its worker's lifo slot), it returns
// that result (JoinDone) and the reductions then left; otherwise
// JoinRequest and the reductions left (a run first may have used some),
// and the scheduler answers the request.
var Join func(holder any, target any, left int64) (k int, bits uint64, rest int64, did int)
