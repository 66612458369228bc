package sched

import (
	"fmt"
	"unicode/utf8"
	"unsafe"

	"github.com/jadevm/jade/vmloop"
)

// An outcome kept for joiners holds memory after the task's heap is gone:
// it counts in the engine's memory budget (ResourceLimits.MemoryBytes)
// from finish until the last reference to the record goes (unref).

// outcomeBytes is what the outcome o holds in host memory beyond the task
// record, or 0 for one that lives in the record (inline).
func outcomeBytes(o *Outcome) int64 {
	if o.inline() {
		return 0
	}
	hb := o.hostBytes
	if hb == 0 {
		hb = o.Value.HostBytes()
	}
	n := int64(unsafe.Sizeof(Outcome{})) + hb + int64(len(o.Trap.Msg))
	return n + int64(len(o.Stack.Frames))*int64(unsafe.Sizeof(vmloop.StackFrame{})) // names and files are the program's
}

// chargeOutcome counts t's outcome o in its engine's memory budget before
// it is published. A trap is always counted, over the limit if need be: it
// is bounded (a message and at most vmloop.MaxStackFrames frames) and says
// why the task ended. A result or a thrown error that does not fit becomes
// a trap of t that says so and keeps what it can of the error: its kind,
// the start of its message and where it was thrown (what a joiner gets is
// then a TaskError, not the value). It returns the bytes charged, for
// setOutcome to record.
func (t *Task) chargeOutcome(o *Outcome) int64 {
	n := outcomeBytes(o)
	o.hostBytes = 0
	if n <= taskBytes || o.Kind == Trapped {
		// No more than the task's own share, which it gives back as it
		// ends, or a trap: never refused, so that a small outcome (an
		// error text, a short string) or the reason of a trap is never
		// lost to a full budget.
		t.engine.mem.Force(n)
		return n
	}
	if t.engine.mem.Take(n) {
		return n
	}
	limit := fmt.Sprintf("exceeds engine %q's memory limit (%d of %d bytes in use; raise memoryBytes)", t.engine.name, t.engine.mem.Used(), t.engine.mem.Limit())
	trap := vmloop.TrapInfo{Code: vmloop.TrapHeapLimit, PC: -1}
	var stack vmloop.Stack
	if o.Kind == Failure {
		if len(o.Stack.Frames) > 0 {
			top := o.Stack.Frames[0]
			trap.Func, trap.PC, trap.File, trap.Line = top.Func, top.PC, top.File, top.Line
		}
		trap.Msg = fmt.Sprintf("uncaught %s; the thrown error of %d bytes %s", clipText(o.Value.String(), maxClippedError), n, limit)
		stack = o.Stack
	} else {
		trap.Msg = fmt.Sprintf("the task's result of %d bytes %s", n, limit)
	}
	*o = Outcome{Kind: Trapped, Trap: trap, Stack: stack}
	n = outcomeBytes(o)
	t.engine.mem.Force(n)
	return n
}

// maxClippedError is how much of a thrown error's text a trap that
// replaces it keeps (chargeOutcome).
const maxClippedError = 200

// clipText returns s cut to at most max bytes on a rune boundary, with
// "..." and the length when it was cut.
func clipText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", s[:cut], len(s))
}

// ReserveMemory counts n bytes of host memory held for engine e's tasks
// outside their heaps (the arguments of a blocking host call, for as long
// as the call is queued or running) in the engine's memory budget; the
// error wraps ErrLimit. ReleaseMemory gives them back. They are Control's
// because the budget is scheduler state (S-16).
func (c *Control) ReserveMemory(e *Engine, n int64, what string) error {
	if e.mem.Take(n) {
		return nil
	}
	return fmt.Errorf("sched: %s: %d bytes exceed engine %q's memory limit (%d of %d bytes in use; raise memoryBytes): %w", what, n, e.name, e.mem.Used(), e.mem.Limit(), ErrLimit)
}

// ReleaseMemory gives back n bytes of engine e counted with ReserveMemory.
func (c *Control) ReleaseMemory(e *Engine, n int64) { e.mem.Give(n) }

// An ended task's record outlives it while heap objects name it (a parent
// that keeps its children's handles): its live share (taskBytes) goes
// back as it ends, so the record counts again, recordBytes, from the end
// until the last handle goes. refRecordCharged in Task.refs marks a
// record so counted.
const (
	recordBytes      = int64(unsafe.Sizeof(Task{}))
	refRecordCharged = 1 << 30
)

// heldKeep bounds the register, frame and handle memory an ended record
// that handles keep keeps for its next life (releaseExec): a parent
// joining its children reuses their records with their memory, but one
// that keeps many handles does not keep large stacks alive with them.
const heldKeep = 1 << 10

// releaseExec releases t's heap at its end (finish): the Exec keeps its
// register, frame and handle memory for the record's next spawn
// (Exec.Recycle) when the record is to be reused, and none (Exec.Retire)
// when the host holds it (pinned: never reused) or handles keep it with
// more than heldKeep bytes. It reports whether t was pinned (a record
// pinned later has its Exec's spare task reference slots given back by
// finish or by the pinner: dropLateSlots).
func (t *Task) releaseExec() (pinned bool) {
	switch {
	case t.has(flagPinned):
		t.x.Retire()
		return true
	case t.refs.Load() == 1:
		t.x.Recycle()
	default:
		t.x.Recycle()
		if f := t.x.Footprint(); f.Regs+f.Frames+f.Handles > heldKeep {
			t.x.Retire()
		}
	}
	return false
}

// heldBytes is what t's ended record holds: itself and the memory its
// Exec kept (releaseExec; unchanged from the end until the record is
// reused).
func (t *Task) heldBytes() int64 {
	f := t.x.Footprint()
	return recordBytes + int64(f.Regs+f.Frames+f.Handles)
}

// chargeRecord counts t's record in its engine's budget when references
// keep it past its end (finish, before it drops the live reference: the
// count cannot reach zero meanwhile). It returns the delta of the live
// reference's drop (unrefOn): -1, or one that marks the record charged
// too (one locked instruction for both). Force: the record exists
// already; the next reservations are refused until enough is given back.
// A spawn that takes a banked live place reserves nothing, and a task
// reference costs its holder's heap nothing, so a spawner keeping the
// references of ended children would meet no refusal: past the limit,
// the banks close, and the next spawn reserves its share from the budget
// and is refused.
func (t *Task) chargeRecord() int32 {
	if t.refs.Load() <= 1 {
		return -1
	}
	e := t.engine
	e.mem.Force(t.heldBytes())
	if e.mem.Used() > e.mem.Limit() {
		e.liveMu.Lock()
		e.closeBanksLocked()
		e.liveMu.Unlock()
	}
	return refRecordCharged - 1
}
