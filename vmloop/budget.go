package vmloop

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

// Budget is a memory limit in bytes shared by many tasks: the scheduler
// gives every engine one (its memoryBytes limit) and passes it to each of
// the engine's tasks in Limits.Memory. A task's heap takes from it what
// the task holds in host memory beyond its fixed records, in chunks
// (budgetChunk), so that the shared counter is written once per chunk,
// not once per allocation:
//
//   - the accounted bytes of its heap objects (heap.bytes, through the
//     heap's grant: heap.granted);
//   - its register and frame stacks beyond StackGrant and its object
//     table, by capacity (Exec.stackBytes, taken and given directly as
//     they change);
//   - while a value is being copied out of the heap (a result, a thrown
//     error, a spawn argument), the copy's host bytes (Value.HostBytes).
//
// The scheduler takes the rest from the same budget: a fixed share per
// live task (its task record and Exec), the outcome a completed task
// keeps for its joiners, the record of an ended task that handles still
// name, its periodic jobs, and the arguments of a blocking host call
// until the call ends. A task whose allocation, call or copy does not
// fit traps (TrapHeapLimit, naming the engine's limit); a spawn that does
// not fit is refused with a catchable ResourceError.
//
// A nil *Budget is no limit. All methods are safe for concurrent use.
//
// Invariant: used passes limit only through Force (memory that exists
// already) or a lowered limit, never through Take.
type Budget struct {
	used  atomic.Int64
	limit atomic.Int64
	// bounds is the heapBounds last made for this budget (boundsFor): the
	// heaps of one engine's tasks share one.
	bounds atomic.Pointer[heapBounds]
}

// heapBounds is what a heap keeps of its task's Limits: MaxHeapBytes and
// the engine's budget, behind one pointer shared by the heaps of an
// engine's tasks (so that the Exec inside a task record stays in its
// allocation size class: sched's TestRecordSizes). Never written once
// made (boundsFor).
type heapBounds struct {
	limit int64   // Limits.MaxHeapBytes
	mem   *Budget // Limits.Memory (nil: none)
	// spent is the same limit with no budget: a heap's bounds once it has
	// given its whole grant back (giveAll); itself when mem is nil.
	spent *heapBounds
}

// plainBounds is the heapBounds last made for a heap with no budget.
var plainBounds atomic.Pointer[heapBounds]

// boundsFor returns heapBounds of limit and mem: the one made last for
// mem (or for no budget) when its limit is the same, else a new one,
// which then becomes the one made last. A spawn looks at one pointer and
// compares one limit (Exec.start does that much inline).
func boundsFor(limit int64, mem *Budget) *heapBounds {
	last := &plainBounds
	if mem != nil {
		last = &mem.bounds
	}
	if b := last.Load(); b != nil && b.limit == limit {
		return b
	}
	b := &heapBounds{limit: limit, mem: mem}
	b.spent = b
	if mem != nil {
		b.spent = &heapBounds{limit: limit}
		b.spent.spent = b.spent
	}
	last.Store(b)
	return b
}

// budget returns the heap's budget (nil: none, or the heap was never
// started).
func (h *heap) budget() *Budget {
	if h.bnd == nil {
		return nil
	}
	return h.bnd.mem
}

// budgetChunk is how much a heap takes from its budget at a time beyond
// what an allocation needs, and how much it keeps when it gives bytes back.
const budgetChunk = 16 << 10

// NewBudget returns a budget of limit bytes (limit > 0).
func NewBudget(limit int64) *Budget {
	b := &Budget{}
	b.limit.Store(limit)
	return b
}

// Take reserves n bytes, or reports false (reserving nothing) when that
// would pass the limit. It checks before it adds (a compare-and-swap
// loop): a reservation that cannot fit never shows in used, so it cannot
// make a concurrent one that fits fail.
func (b *Budget) Take(n int64) bool {
	if b == nil || n <= 0 {
		return true
	}
	for {
		u := b.used.Load()
		if n > b.limit.Load()-u {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

// Give returns n bytes taken with Take.
func (b *Budget) Give(n int64) {
	if b != nil && n != 0 {
		b.used.Add(-n)
	}
}

// Used returns the bytes reserved now.
func (b *Budget) Used() int64 {
	if b == nil {
		return 0
	}
	return b.used.Load()
}

// Limit returns the limit in bytes (0 for a nil budget: none).
func (b *Budget) Limit() int64 {
	if b == nil {
		return 0
	}
	return b.limit.Load()
}

// SetLimit changes the limit. What is reserved stays reserved; a lowered
// limit refuses the next reservations until enough is given back.
func (b *Budget) SetLimit(n int64) { b.limit.Store(n) }

// cover makes the heap's grant from its budget cover total bytes; false
// when the budget cannot (the grant is then unchanged). A grant that must
// grow at least doubles, up to a chunk at a time: a task that allocates
// little takes little (a hundred thousand tasks holding one object each
// must not hold a chunk each), one that allocates much writes the shared
// counter once per chunk.
func (h *heap) cover(total int64) bool {
	mem := h.bnd.mem
	if mem == nil || total <= h.granted {
		return true
	}
	need := total - h.granted
	more := max(need, min(h.granted, budgetChunk))
	if mem.Take(more) {
		h.granted += more
		return true
	}
	if more > need && mem.Take(need) {
		h.granted += need
		return true
	}
	return false
}

// room makes the heap's grant cover n bytes beyond its objects, counted
// past the budget's limit when the budget cannot cover them (memory a
// handler needs to see the error that says the budget ran out).
func (h *heap) room(n int64) {
	mem := h.budget()
	if total := h.bytes + n; mem != nil && !h.cover(total) {
		mem.Force(total - h.granted)
		h.granted = total
	}
}

// uncover gives back what the grant holds beyond the heap's objects and
// a chunk, once that surplus is more than two chunks (so that a task
// allocating and freeing around one size does not write the budget each
// time).
func (h *heap) uncover() {
	mem := h.budget()
	if mem == nil {
		return
	}
	if keep := h.bytes + budgetChunk; h.granted-keep > 2*budgetChunk {
		mem.Give(h.granted - keep)
		h.granted = keep
	}
}

// HeapGrant is the part of a heap's objects that its budget does not
// count, as StackGrant is of its stacks: the scheduler's fixed share per
// live task covers it. A heap's grant starts at HeapGrant (heap.init), so
// a task that holds an event reference or two (objHeader each) takes
// nothing from the engine's shared counter and gives nothing back at its
// end (two locked instructions per task, BenchmarkChainedSpawn).
const HeapGrant = 64

// giveAll returns the heap's whole grant, less the HeapGrant it began
// with, and leaves it without a budget (the task ended; Exec.Free has
// given back its stacks).
func (h *heap) giveAll() {
	if h.bnd != nil {
		if mem := h.bnd.mem; mem != nil {
			mem.Give(h.granted - HeapGrant)
		}
		h.bnd = h.bnd.spent
	}
	h.granted = 0
}

// Force counts n more bytes in b even past its limit (memory that exists
// already: the next reservations are refused until enough is given back).
func (b *Budget) Force(n int64) {
	if b != nil && n != 0 {
		b.used.Add(n)
	}
}

// StackGrant is the part of a task's register and frame stacks that its
// budget does not count: the scheduler's fixed share per live task covers
// it (with the task record), so that a small task's start and end leave
// the engine's shared counter alone (two locked instructions per task,
// BenchmarkSpawnJoin). It covers 16 registers and 5 frames.
const StackGrant = 256

// stackBytes is what register and frame stacks of regs words and frames
// frames, beyond StackGrant, and the heap's object table take in host
// memory: the part of a task's memory that its budget counts beside the
// heap objects, taken and given directly as the capacities change
// (rarely: they double).
func (e *Exec) stackBytes(regs, frames int) int64 {
	return overGrant(int64(regs)*8+int64(frames)*int64(unsafe.Sizeof(frame{}))) + int64(e.heap.tableSlots())*int64(unsafe.Sizeof(object{}))
}

// overGrant is what the budget counts of n bytes of register and frame
// stacks: what passes StackGrant.
func overGrant(n int64) int64 { return max(n-StackGrant, 0) }

// stackGrowth is what the budget counts more (stackBytes) when the stacks
// grow from their capacities to regs words and frames frames.
func (e *Exec) stackGrowth(regs, frames int) int64 {
	return e.stackBytes(regs, frames) - e.stackBytes(cap(e.regs), cap(e.frames))
}

// restack counts the change of the stacks from regs words and frames
// frames to their current capacities (force: they exist already).
func (e *Exec) restack(regs, frames int) {
	e.heap.budget().Force(e.stackBytes(cap(e.regs), cap(e.frames)) - e.stackBytes(regs, frames))
}

// memMsg is the message of a trap for n more bytes that the engine's
// budget could not cover.
func (h *heap) memMsg(what string, n int64) string {
	return fmt.Sprintf("%s of %d bytes exceeds the engine's memory limit (%d of %d bytes in use by the engine's tasks; raise memoryBytes)", what, n, h.budget().Used(), h.budget().Limit())
}

// limitMsg is the message of a TrapHeapLimit for an allocation of n bytes.
func (h *heap) limitMsg(n int64) string {
	if n > maxObjectBytes {
		return fmt.Sprintf("allocation of %d bytes exceeds the largest object (%d bytes)", n, int64(maxObjectBytes))
	}
	if n >= 0 && n <= h.bnd.limit-h.bytes {
		return h.memMsg("allocation", n)
	}
	return fmt.Sprintf("allocation of %d bytes exceeds the heap limit (%d of %d bytes in use)", n, h.bytes, h.bnd.limit)
}

// allocFail is the trap of a failed alloc of n bytes. It names the
// reason from the heap's own state and takes nothing from the budget: a
// budget that refused the alloc may have room again by now (another task
// gave bytes back), and asking it again would blame the handle table.
func (h *heap) allocFail(n int64) TrapInfo {
	if h.tableFull() {
		return TrapInfo{Code: TrapHeapLimit, Msg: fmt.Sprintf("handle table full (%d objects)", maxObjects-1)}
	}
	return TrapInfo{Code: TrapHeapLimit, Msg: h.limitMsg(n)}
}

// tableFull reports whether the handle table has no slot for one more
// object.
func (h *heap) tableFull() bool { return h.free == 0 && h.slots() >= maxObjects-1 }
