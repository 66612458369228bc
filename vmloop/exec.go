package vmloop

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"unsafe"
)

// Exec is the execution state of one task: its register stack, frame stack
// and heap, the pending intrinsic request, and the outcome once it ends.
//
// Memory layout. The register stack is a []uint64 that holds no Go
// pointers: i64 values, f64 bit patterns and heap handles only. A frame is
// three ints {fn, pc, base}; the registers of a frame are regs[base:],
// addressed by the 8-bit register operands from a pointer to the frame's
// register 0, so register accesses need no bounds checks. The stack keeps
// at least NRegs slots above the current base (CALL and TAILCALL grow it
// when needed; the jadecheck build keeps MaxRegs). A call window
// is Lua-style: CALL a,C,D starts the callee's frame at base+a, where the
// caller has already put the arguments, and RET writes the result to the
// callee's register 0, which is the caller's register a. Both stacks start
// small (a small allocation shares its cache line with others); grown
// stacks, and those of a task the scheduler calls Isolate on after a whole
// slice, are whole 64-byte lines of their own, so long-running tasks on
// different workers never write to one line.
//
// An Exec is driven by one goroutine at a time (the worker running the
// task); only Stop and ClearStop may be called concurrently with Run.
type Exec struct {
	prog   *Program
	regs   []uint64
	frames []frame // frames[0..fp]; frames[fp] is current (its pc is written back when Run leaves the inline path)
	fp     int
	heap   heap
	//lint:ignore U1000 holds the register type tags in the jadecheck build (interp_check.go)
	shadow // jadecheck register type tags (empty in the fast build)

	left       int64
	reductions uint64
	stop       atomic.Bool
	state      execState
	native     nativeMode // which loop Run uses (native_hook.go)
	// nativeSkip Runs start in the Go loop before the native loop is tried
	// again; nativeBackoff doubles each time a native attempt hands over
	// early (the region rule), so intrinsic-heavy tasks stop paying a cgo
	// crossing per Run (native_hook.go).
	nativeSkip, nativeBackoff uint8

	// pending intrinsic request (state == stRequest)
	reqArg0 uint8 // register of argument 0 for non-window builtins
	reqWin  bool  // arguments are the window Base..Base+NArgs-1
	reqDstT Type  // type of the destination register
	// resT is the type of res (below).
	resT Type
	// maxFrames is Limits.MaxFrames (its MaxHeapBytes is heap.bnd.limit).
	maxFrames int32
	req       Request
	reqPC     int32 // pc of the requesting instruction
	// reqDst is the destination register, -1 when the request has no result.
	reqDst int32

	// res is the entry function's scalar result (stCompleted; a reference
	// result is in rare.out), or what KeepResult recorded. Recycle, Retire
	// and Free keep it (with resT): a scheduler's task record reads its
	// inline outcome here after the end (KeptResult); Reset clears it.
	res uint64

	// rare holds what few runs touch (the end of the task, chunked bulk
	// instructions), allocated on first use and kept across Recycle, so a
	// parked task does not carry it inline.
	rare *execRare
}

// execRare is the rarely used part of an Exec.
type execRare struct {
	out  Value // the result (stCompleted) or the thrown error (stThrown)
	trap TrapInfo
	// a bulk instruction interrupted between chunks (pc still at it)
	bulk bulkState
	kstr []uint64 // LDS: one handle per string constant, made on first use
	// thrownAt is where the uncaught error of a stThrown task was thrown;
	// unwinding collects it in unwound (reused: a caught throw discards it).
	thrownAt Stack
	unwound  []frame
	trapAt   Stack // where the task trapped (placeTrap)
	// copied is the reductions owed for copies across the heap boundary
	// made while a request was handled (owe), not yet charged to a slice
	// (TakeCopyCharge).
	copied int64
	// spawn is the copy of a spawn's reference arguments into this
	// (child's) heap while it is under way (spawn_copy.go).
	spawn *spawnCopy
	// exp is the export of the task's reference result while it is
	// under way (the task stopped at its RET), imp the import of a
	// request's result (the task stopped at its request): result_copy.go.
	exp *exporter
	imp *importer
	// arg is the export of a request's reference argument while it is
	// under way (the task stopped at its request): arg_copy.go.
	arg *argExport
	// outHost is out.HostBytes() of a reference result (ResultHostBytes).
	outHost int64
}

// x returns e's rare part, allocating it on first use.
func (e *Exec) x() *execRare {
	if e.rare == nil {
		e.rare = &execRare{}
	}
	return e.rare
}

// frame is one activation: function index, pc (the next instruction; for
// a caller, the instruction after its CALL) and register base.
type frame struct {
	fn, pc, base int
}

// bulkState records the progress of a chunked bulk instruction.
type bulkState struct {
	on   bool
	fn   int
	pc   int
	done int64 // bytes processed so far
	// acc is the magnitude parsed so far by a chunked BTOI or STOI.
	acc uint64
	// dst is the destination of a chunked allocating instruction (SCONCAT
	// STOB BTOS BNEW BSLICE ANEW), filled up to done; size is the
	// accounted size of the object it becomes, reserved in the heap's
	// bytes until then (interp_long.go).
	dst  *strings.Builder
	size int64
	// walk: the cycle check of ASETR is under way; its DFS stack and marks
	// are in the heap (heap.reachStart, heap.reachMore).
	walk bool
	// find is the progress of a long-needle BFIND or BFINDR (find.go).
	find *findState
}

type execState uint8

const (
	stReady     execState = iota // runnable (fresh or preempted)
	stRequest                    // returned SigIntrinsic; the request is pending
	stCompleted                  // entry function returned
	stThrown                     // a Throw escaped the entry function
	stTrapped                    // trapped
)

// bulkChunk is the largest piece of a bulk instruction done without
// looking at the budget (64 KiB).
const bulkChunk = 64 << 10

// NewExec prepares a task that runs function fn of the verified program p
// with the given arguments. Each argument must fit its parameter's type:
// KindI64 for i64, KindF64 for f64, and a reference kind (or Void, the null
// handle) for ref; reference values are imported into the task's fresh
// heap. Zero fields of lim take their DefaultLimits values. owner names the
// task in its handles (it is truncated to 24 bits); handles of one Exec are
// refused by every Exec with another owner.
func NewExec(p *Program, fn int, args []Value, lim Limits, owner uint32) (*Exec, error) {
	e := &Exec{}
	if err := e.Reset(p, fn, args, lim, owner); err != nil {
		return nil, err
	}
	return e, nil
}

// Recycle keeps at most this much: a task that grew a deep register or
// frame stack or a large handle table does not pin it in a pool (at most
// 8 KiB + 6 KiB + 3 KiB per pooled Exec; the scheduler pools up to 256 per
// worker and 1024 more between workers).
const (
	maxRecycledRegs   = 1024
	maxRecycledFrames = 256
	maxRecycledObjs   = 64
)

// Recycle frees e like Free but keeps its register and frame memory for a
// later Reset (a scheduler keeps its recycled Execs, so a spawn allocates
// none). Nothing the finished task owned stays reachable; the program
// stays, for names, until DropProgram or the next Reset.
func (e *Exec) Recycle() {
	regs, frames := e.regs, e.frames
	objs := e.heap.objs
	keep := cap(objs) <= maxRecycledObjs
	e.Free() // tells taskRefs the task objects are gone; pools a large table
	if keep {
		clear(objs) // drop what the objects referenced
		e.heap.objs = objs[:0]
	}
	if cap(regs) <= maxRecycledRegs {
		e.regs = regs[:0]
	}
	if cap(frames) <= maxRecycledFrames {
		e.frames = frames[:0]
	}
	if e.rare != nil {
		*e.rare = execRare{} // drop what the result referenced; keep the memory
	}
}

// Retire frees e like Free and drops its rare part too: e keeps no memory
// beyond its struct (an Exec that stays reachable long after its task
// ended, and is not pooled meanwhile). The program stays, as for Recycle;
// Reset makes e ready again.
func (e *Exec) Retire() {
	e.Free()
	e.DropTaskRefSlots()
	e.rare = nil
}

// DropProgram forgets e's program (a pooled Exec must not keep one alive).
func (e *Exec) DropProgram() { e.prog = nil }

// Reset makes e start function fn of the verified program p with args, as
// NewExec does, reusing e's memory. e must be new or recycled (Recycle) and
// not running. A concurrent Stop (a late cancel aimed at the task that used
// e before) may survive into the new run as one spurious preemption.
func (e *Exec) Reset(p *Program, fn int, args []Value, lim Limits, owner uint32) error {
	f, err := e.start(p, fn, len(args), lim, owner)
	if err != nil {
		return err
	}
	for i, v := range args {
		t := f.Params[i]
		var bits uint64
		switch {
		case t == TI64 && v.kind == KindI64, t == TF64 && v.kind == KindF64:
			bits = v.bits
		case t == TRef && (v.kind == KindVoid || v.kind.Type() == TRef):
			h, err := e.heap.importValue(v)
			if err != nil {
				return argImportErr(f, i, err)
			}
			bits = h
		default:
			return fmt.Errorf("vmloop: NewExec: argument %d of %s is %s, parameter is %s", i, f.Name, v.kind, t)
		}
		e.setAbs(i, bits, t)
	}
	return nil
}

// ResetSpawn is Reset for the function and arguments of src's pending
// spawn request (src is the spawning task's Exec, stopped at SPAWN):
// scalar arguments are copied register to register and references
// straight from src's heap into e's, so a spawn builds no Values. The
// verifier typed the argument registers by the callee's parameters. A
// reference that cannot be copied out (a stale handle, the heap limit) is
// src's fault: the error wraps its TrapInfo. It does the whole copy at
// once; BeginSpawn and SpawnMore do it in bounded steps (spawn_copy.go).
func (e *Exec) ResetSpawn(src *Exec, lim Limits, owner uint32) error {
	more, err := e.BeginSpawn(src, lim, owner)
	for err == nil && more {
		more, err = e.SpawnMore(src)
	}
	return err
}

// argImportErr is NewExec's error for argument i of f that the new heap
// could not take (a TrapInfo from import: the heap limit).
func argImportErr(f *Function, i int, err error) error {
	ti := err.(TrapInfo)
	if ti.Code == TrapHeapLimit {
		return fmt.Errorf("vmloop: NewExec: argument %d of %s: %w: %s", i, f.Name, ErrHeapLimit, ti.Msg)
	}
	return fmt.Errorf("vmloop: NewExec: argument %d of %s: %s: %s", i, f.Name, ti.Code, ti.Msg)
}

// ErrHeapLimit is wrapped by the error of a new task whose arguments its
// heap, or its engine's memory budget, cannot take: a resource limit, as
// the engine's live-task and memory limits are.
var ErrHeapLimit = errors.New(TrapHeapLimit.String())

// start is Reset up to the arguments: it checks p, fn and the argument
// count and makes e a fresh activation of fn.
func (e *Exec) start(p *Program, fn int, nargs int, lim Limits, owner uint32) (*Function, error) {
	if p == nil {
		return nil, errors.New("vmloop: NewExec: nil program")
	}
	if !p.Verified() {
		return nil, errors.New("vmloop: NewExec: program is not verified (run Verify first)")
	}
	if fn < 0 || fn >= len(p.Funcs) {
		return nil, fmt.Errorf("vmloop: NewExec: function index %d out of range (program has %d)", fn, len(p.Funcs))
	}
	f := &p.Funcs[fn]
	if nargs != len(f.Params) {
		return nil, fmt.Errorf("vmloop: NewExec: %s takes %d arguments, got %d", f.Name, len(f.Params), nargs)
	}
	if lim.MaxFrames <= 0 {
		lim.MaxFrames = DefaultLimits.MaxFrames
	}
	if lim.MaxHeapBytes <= 0 {
		lim.MaxHeapBytes = DefaultLimits.MaxHeapBytes
	}
	need := headroom(f.NRegs)
	regs := e.regs
	if cap(regs) >= need {
		regs = regs[:need]
		clear(regs)
	} else {
		regs = make([]uint64, need)
	}
	frames := e.frames
	if cap(frames) >= 1 {
		frames = frames[:1]
	} else {
		frames = make([]frame, 1)
	}
	// Every field but stop (atomic: a late Stop may race; see above) is
	// set here; TestResetEqualsNew keeps this list complete.
	e.prog, e.maxFrames, e.regs, e.frames, e.fp = p, int32(min(lim.MaxFrames, math.MaxInt32)), regs, frames, 0
	e.heap = heap{objs: e.heap.objs[:0], side: &noSide, holds: e.heap.holds} // recycled capacity and spare task reference slots, if any
	e.freeShadow()
	e.state, e.left, e.reductions = stReady, 0, 0
	if e.stop.Load() {
		e.stop.Store(false) // a locked instruction: only when set
	}
	e.native, e.nativeSkip, e.nativeBackoff = nativeAuto, 0, 0
	e.req, e.reqPC, e.reqArg0, e.reqWin, e.reqDst, e.reqDstT = Request{}, 0, 0, false, -1, 0
	e.res, e.resT = 0, 0
	if e.rare != nil {
		*e.rare = execRare{}
	}
	e.growShadow(len(e.regs))
	// The engine's heapBounds: boundsFor's common case inline.
	var bnd *heapBounds
	if m := lim.Memory; m != nil {
		bnd = m.bounds.Load()
	}
	if bnd == nil || bnd.limit != lim.MaxHeapBytes {
		bnd = boundsFor(lim.MaxHeapBytes, lim.Memory)
	}
	e.heap.init(owner, bnd)
	bnd.mem.Force(e.stackBytes(cap(e.regs), cap(e.frames))) // as they are
	e.frames[0] = frame{fn: fn}
	return f, nil
}

// Left returns the budget left when the last Run returned (negative when a
// bulk instruction overran it).
func (e *Exec) Left() int64 { return e.left }

// Reductions returns the total reductions the task has used over all runs.
func (e *Exec) Reductions() uint64 { return e.reductions }

// Stop asks the running loop to return SigPreempted at its next safe point.
// It may be called from any goroutine; the flag stays set until ClearStop.
func (e *Exec) Stop() { e.stop.Store(true) }

// ClearStop clears the flag set by Stop.
func (e *Exec) ClearStop() { e.stop.Store(false) }

// Stopped reports whether the stop flag is set.
func (e *Exec) Stopped() bool { return e.stop.Load() }

// HeapBytes returns the accounted bytes of the task's live heap objects.
func (e *Exec) HeapBytes() int64 { return e.heap.bytes }

// Result returns the entry function's value after SigCompleted (Void for a
// void function; a reference result is copied out of the heap).
func (e *Exec) Result() Value {
	if e.state != stCompleted {
		return Value{}
	}
	switch e.resT {
	case TI64:
		return Value{kind: KindI64, bits: e.res}
	case TF64:
		return Value{kind: KindF64, bits: e.res}
	case TRef:
		return e.x().out
	}
	return Value{}
}

// Thrown returns the error that escaped the entry function after SigThrown.
func (e *Exec) Thrown() Value {
	if e.state != stThrown {
		return Value{}
	}
	return e.x().out
}

// Trap returns the trap after SigTrapped (Code TrapNone otherwise).
func (e *Exec) Trap() TrapInfo {
	if e.rare == nil {
		return TrapInfo{}
	}
	return e.rare.trap
}

// Where returns the name of the current function and its pc: the next
// instruction to run (after SigPreempted and SigIntrinsic), the returning
// instruction after SigCompleted, or the pc of the throw site's frame.
func (e *Exec) Where() (fn string, pc int) {
	if len(e.frames) == 0 {
		return "", -1
	}
	f := e.frames[e.fp]
	return e.prog.Funcs[f.fn].Name, f.pc
}

// Free releases the task's heap, registers and frames. Call it when the task
// has ended and its result or error has been taken; Result, Thrown and
// Trap stay valid. Run after Free reports a trap.
func (e *Exec) Free() {
	e.heap.budget().Give(e.stackBytes(cap(e.regs), cap(e.frames)))
	e.dropCopies()
	e.heap.reset()
	e.regs = nil
	e.freeShadow()
	e.frames = nil
	e.fp = 0
	if e.rare != nil {
		e.rare.kstr = nil
	}
	if e.state == stReady || e.state == stRequest {
		e.state = stTrapped
		e.x().trap = TrapInfo{Code: TrapIntrinsic, Msg: "task freed before it ended", PC: -1}
	}
}

// growRegs makes the register stack hold at least need slots: within its
// capacity when it has room (a recycled stack keeps its capacity), else in
// a new allocation of whole cache lines (see Isolate).
//
// A new allocation is counted in the engine's budget first: false (and no
// change) when the budget cannot cover it, unless force (a growth the
// loop cannot refuse: it is counted past the limit, and the next
// reservation of the engine's tasks is refused).
func (e *Exec) growRegs(need int, force bool) bool {
	n := 2 * len(e.regs)
	if n < need {
		n = need
	}
	if n <= cap(e.regs) {
		old := len(e.regs)
		e.regs = e.regs[:n]
		clear(e.regs[old:])
		e.growShadow(n)
		return true
	}
	n = lineWords(n)
	if d := e.stackGrowth(n, cap(e.frames)); force {
		e.heap.budget().Force(d)
	} else if !e.heap.budget().Take(d) {
		return false
	}
	r := make([]uint64, n)
	copy(r, e.regs)
	e.regs = r
	e.growShadow(n)
	return true
}

// lineWords rounds n 8-byte words up to whole 64-byte cache lines. Go
// allocates such a slice from a size class that is itself a multiple of
// 64 bytes (every class a 64-byte multiple request can land in is, up to
// 32 KiB; larger ones are whole pages), in a page-aligned span, and a
// pointer-free slice has no malloc header: it starts on a line and shares
// none. (An -asan build adds red zones and loses this; nothing breaks.)
func lineWords(n int) int { return (n + 7) &^ 7 }

// lineFrames rounds n frames (24 bytes each) up to a multiple of 8 (192
// bytes: three cache lines), for the same reason.
func lineFrames(n int) int { return (n + 7) &^ 7 }

// Isolate gives e's register stack and frame stack cache lines of their
// own, copying each that may share one with another allocation. Call it
// between two Runs of a task that runs long (the scheduler does after a
// slice that used its whole budget): the stacks of small tasks are small
// allocations, which Go packs several to a line, and two tasks writing
// their registers on two workers then take that line from each other on
// every write. Measured on the fairness benchmark's four hogs on two
// workers: 280–450 hog units/s in most runs, 676–682 every run once
// isolated. Tasks that end or wait within their first slice never pay for
// the copy, and a recycled Exec keeps isolated stacks (their capacity).
func (e *Exec) Isolate() {
	regs, frames := cap(e.regs), cap(e.frames)
	defer e.restack(regs, frames)
	if !onLine(unsafe.Pointer(unsafe.SliceData(e.regs)), cap(e.regs)*8) {
		r := make([]uint64, len(e.regs), lineWords(len(e.regs)))
		copy(r, e.regs)
		e.regs = r
	}
	if !onLine(unsafe.Pointer(unsafe.SliceData(e.frames)), cap(e.frames)*int(unsafe.Sizeof(frame{}))) {
		f := make([]frame, len(e.frames), lineFrames(len(e.frames)))
		copy(f, e.frames)
		e.frames = f
	}
}

// Isolated reports whether e's register and frame stacks start on a cache
// line and fill whole lines (Isolate).
func (e *Exec) Isolated() bool {
	return onLine(unsafe.Pointer(unsafe.SliceData(e.regs)), cap(e.regs)*8) &&
		onLine(unsafe.Pointer(unsafe.SliceData(e.frames)), cap(e.frames)*int(unsafe.Sizeof(frame{})))
}

func onLine(p unsafe.Pointer, bytes int) bool {
	return bytes == 0 || uintptr(p)%64 == 0 && bytes%64 == 0
}
