package vmloop

import "unsafe"

// Program returns the program the task runs.
func (e *Exec) Program() *Program { return e.prog }

// Loc returns the current function index and pc (as Where, but without
// the name). It is -1, -1 after Free.
func (e *Exec) Loc() (fn, pc int) {
	if len(e.frames) == 0 {
		return -1, -1
	}
	f := e.frames[e.fp]
	return f.fn, f.pc
}

// FuncName returns the name of function i of the task's program, or "" if
// i is out of range or the Exec holds no program.
func (e *Exec) FuncName(i int) string { return e.prog.FuncName(i) }

// Footprint is the memory an Exec holds outside its own struct, in bytes
// of capacity (what its allocations were asked for, before Go rounds them
// to a size class): the register file, the frame stack and the heap's
// handle table (one 48-byte slot per object, live or free). The objects'
// payloads (strings, arrays) are not counted.
type Footprint struct {
	Regs, Frames, Handles int
}

// RefSlotBytes is the memory of one slot of the shared reference table
// (taskref.go): what a task or event reference a heap holds, or a spare
// slot it keeps, takes of the table (its chunks are made and released
// whole, and a free slot is linked through itself).
const RefSlotBytes = int(unsafe.Sizeof(trefSlot{}))

// RefSlots returns how many slots of the shared reference table e's heap
// holds (its task and event references) or keeps spare; each is
// RefSlotBytes of the table. It walks the heap's ring of slots.
func (e *Exec) RefSlots() int {
	held, spare := e.heap.taskRefs()
	return held + spare
}

// Footprint returns what e holds outside its struct (see Footprint).
func (e *Exec) Footprint() Footprint {
	return Footprint{
		Regs:    cap(e.regs) * 8,
		Frames:  cap(e.frames) * int(unsafe.Sizeof(frame{})),
		Handles: cap(e.heap.objs) * int(unsafe.Sizeof(object{})),
	}
}

// ScalarResult returns the result of a completed task whose entry
// function returns void, i64 or f64, as its kind and bits (a Value's
// Kind and its bits: I64's two's complement, F64's IEEE 754 bits); ok is
// false for a reference result or a task that has not completed. The
// scheduler completes such a task without building a Value.
func (e *Exec) ScalarResult() (k Kind, bits uint64, ok bool) {
	if e.state != stCompleted || e.resT == TRef {
		return KindVoid, 0, false
	}
	k, bits = e.KeptResult()
	return k, bits, true
}

// KeepResult records the scalar k, bits (void, i64 or f64, as
// ScalarResult returns them) in e's result word, as a RET of the entry
// function does: a scheduler that completes the task with such an
// outcome, made elsewhere, keeps it there and reads it back with
// KeptResult (its task record holds no copy). Call it once e's task has
// ended (after Recycle, Retire or Free: they keep the result word; Reset
// clears it).
func (e *Exec) KeepResult(k Kind, bits uint64) {
	e.res, e.resT = bits, k.Type()
}

// KeptResult returns the kind and bits in e's result word: the entry
// function's scalar result after SigCompleted (ScalarResult) or what
// KeepResult recorded, whatever e's state (Recycle, Retire and Free keep
// the word; Reset clears it to void). The kind is void for a reference
// result: the caller knows when the word holds a scalar.
func (e *Exec) KeptResult() (k Kind, bits uint64) {
	switch e.resT {
	case TI64:
		return KindI64, e.res
	case TF64:
		return KindF64, e.res
	}
	return KindVoid, 0
}

// ScalarValue is the Value of kind k (void, i64 or f64) with bits, as
// ScalarResult returns them.
func ScalarValue(k Kind, bits uint64) Value {
	switch k {
	case KindI64, KindF64:
		return Value{kind: k, bits: bits}
	}
	return Value{}
}
