package vmloop

import (
	"fmt"
	"sync/atomic"

	"github.com/jadevm/jade/internal/vmhook"
)

// Task references that are not heap objects.
//
// A ref register naming a task holds a task reference, not a handle to a
// heap object: the runtime's task object lives in a slot of one table
// shared by every heap (trefTable), and the reference is the slot's index
// and generation:
//
//	bits  0..23  zero (a handle's index: no handle has index 0 but null)
//	bits 24..47  the slot (1 <= slot < 2^24)
//	bits 48..63  the slot's generation when the reference was made
//
// A slot belongs to one heap at a time, its holder: the heap that imported
// the task (a spawn's result, a copy bringing a task in). While the
// holder holds it, the slot's word is gen<<1|1 and the task is counted
// once (the task hook, +1); freeing the reference (FREE) or the holder's
// end releases the hold: the word becomes (gen+1)<<1 (the hook, -1), so
// every copy of the reference is stale from then on. A reference is used
// only when the slot's word is its generation, held, and the slot's
// holder is the heap using it (the owner id): a stale reference — freed,
// its holder ended, the slot held again by another heap for another task
// — fails like a stale handle (TrapHandle), never reaching the task the
// slot names now. A slot whose generation would wrap is retired, never
// held again (as a heap slot is, heap.release).
//
// So a spawn's result costs no heap slot, no object accounting and no
// budget: the holder's released slots stay on its ring of slots (held and
// spare, heap.holds) for its next spawn, and go back to the table's free
// list when it ends. The table's slots run out only after 2^24 of them are
// held at once or retired; a heap then makes a task object as before
// (newExt), which every use also accepts.
//
// Concurrency: only the holder writes a held slot (its task runs on one
// worker at a time), and only the holder's references can match its word;
// a stale reference on another worker reads only the word (atomic), and a
// slot passes from heap to heap through the free list's lock.

const (
	trefSlotShift = 24
	trefGenShift  = 48
	trefSlotMask  = 1<<24 - 1
	trefGenMax    = 1<<16 - 1

	trefChunkShift = 10
	trefChunkLen   = 1 << trefChunkShift
	trefChunkMask  = trefChunkLen - 1
	// trefMaxSlots bounds the table (24 slot bits; slot 0 is not used).
	trefMaxSlots = 1 << 24
)

// trefSlot is one slot of the task reference table.
type trefSlot struct {
	obj any // the task, while held; written by the holder only
	// word is gen<<1 | held: gen counts the holds released, held is set
	// while a heap holds the slot. A retired slot's word stays
	// trefGenMax<<1, which no reference matches (held is clear).
	word  atomic.Uint32
	owner uint32 // the holder's owner id (heap.owner)
	// prev, next link the holder's ring of slots (heap.holds); touched by
	// the holder only.
	prev, next uint32
}

// IsTaskRef reports whether x, a ref register's bits, is a task reference
// (not a heap handle, not null).
func IsTaskRef(x uint64) bool { return x != 0 && x&handleIdxMask == 0 }

// holdTask makes a task reference to obj held by h, or returns 0 when the
// table has no slot left (the caller makes a task object instead).
func (h *heap) holdTask(obj any) uint64 {
	x := h.holdCounted(obj)
	if x != 0 {
		noteTask(KindTask, obj, +1)
	}
	return x
}

// holdCounted is holdTask without telling the task hook.
func (h *heap) holdCounted(obj any) uint64 {
	s := h.ring()
	var sl *trefSlot
	if s != 0 {
		sl = trefAt(uint64(s))
		if sl.word.Load()&1 == 0 {
			h.setRing(sl.next) // a spare at the head: it becomes the tail
		} else {
			sl = nil
		}
	}
	if sl == nil {
		// No spare: a slot from the table, or, for a heap that holds
		// some already (a fan-out), a batch (one lock for trefBatch
		// spawns); spares at the head, the first taken.
		n := 1
		if h.ring() != 0 {
			n = trefBatch
		}
		var buf [trefBatch]uint32
		got := trefTake(buf[:0], n)
		if len(got) == 0 {
			return 0
		}
		for _, g := range got {
			h.linkHead(g, trefAt(uint64(g)))
		}
		s = h.ring()
		sl = trefAt(uint64(s))
		h.setRing(sl.next) // it becomes the tail
	}
	sl.obj = obj
	sl.owner = h.owner
	gen := sl.word.Load() >> 1
	sl.word.Store(gen<<1 | 1)
	return uint64(gen)<<trefGenShift | uint64(s)<<trefSlotShift
}

// CompleteTask completes the pending request (a spawn) with a task
// reference to obj, the task it made, whose hold the caller has counted
// already: the task hook is not told of it (one call and an atomic add
// fewer per spawn). Where the table has no slot left the reference is an
// object, as Complete makes, and the count taken for it is dropped
// (TaskRefs, -1), as it is for a request without a ref destination
// (never a verified spawn's).
func (e *Exec) CompleteTask(obj any) error {
	if e.state != stRequest || e.reqDst < 0 || e.reqDstT != TRef {
		err := e.Complete(Ext(KindTask, obj))
		noteTask(KindTask, obj, -1)
		return err
	}
	x := e.heap.holdCounted(obj)
	if x == 0 {
		err := e.Complete(Ext(KindTask, obj))
		noteTask(KindTask, obj, -1)
		return err
	}
	e.state = stReady
	e.setAbs(e.frames[e.fp].base+int(e.reqDst), x, TRef)
	return nil
}

// taskRef returns the slot of x when x is a task reference h holds, else
// nil.
func (h *heap) taskRef(x uint64) *trefSlot {
	if !IsTaskRef(x) {
		return nil
	}
	sl := trefAt(x >> trefSlotShift & trefSlotMask)
	if sl == nil || sl.word.Load() != uint32(x>>trefGenShift)<<1|1 || sl.owner != h.owner {
		return nil
	}
	return sl
}

// dropTaskRef releases the task reference x (FREE, an import rolled
// back): every copy of it is stale from now on. It reports false when x is
// not a task reference h holds.
func (h *heap) dropTaskRef(x uint64) bool {
	sl := h.taskRef(x)
	if sl == nil {
		return false
	}
	s := uint32(x >> trefSlotShift & trefSlotMask)
	if h.endHold(s, sl) {
		h.unlink(s, sl) // retired
		trefGive([]uint32{s})
	} else if h.ring() != s {
		// To the head, a spare for the next spawn.
		h.unlink(s, sl)
		h.linkHead(s, sl)
	}
	return true
}

// unhold ends the hold of slot s (the word's generation moves on unless
// it would wrap: the slot is then retired).
func (h *heap) unhold(s uint32, sl *trefSlot) {
	sl.obj = nil
	gen := sl.word.Load() >> 1
	if gen < trefGenMax {
		gen++
	}
	sl.word.Store(gen << 1)
}

// unlink takes slot s off h's ring.
func (h *heap) unlink(s uint32, sl *trefSlot) {
	if sl.next == s {
		h.setRing(0)
		return
	}
	trefAt(uint64(sl.prev)).next = sl.next
	trefAt(uint64(sl.next)).prev = sl.prev
	if h.ring() == s {
		h.setRing(sl.next)
	}
}

// linkHead puts slot s (off the ring) at the head of h's ring.
func (h *heap) linkHead(s uint32, sl *trefSlot) {
	if h.ring() == 0 {
		sl.prev, sl.next = s, s
	} else {
		head := trefAt(uint64(h.ring()))
		sl.prev, sl.next = head.prev, h.ring()
		trefAt(uint64(head.prev)).next = s
		head.prev = s
	}
	h.setRing(s)
}

// noteDrop tells the task hook that h dropped its reference to obj: with
// the Exec that dropped it when that is a scheduler task record's (the
// scheduler recycles a record whose last reference goes on the worker
// running that Exec), else as any reference dropped.
func (h *heap) noteDrop(obj any) {
	if h.holds&trefRecord != 0 && vmhook.TaskDrop != nil {
		vmhook.TaskDrop(obj, h.exec())
		return
	}
	noteTask(KindTask, obj, -1)
}

// MarkTaskRecord marks e as the Exec inside a scheduler task record (set
// once, when the record is made): the task hook's TaskDrop is then told
// of the references e drops, with e (internal/vmhook).
func (e *Exec) MarkTaskRecord() { e.heap.holds |= trefRecord }

// trefRecord is the bit of heap.holds that says its Exec is a task
// record's (MarkTaskRecord); the other bits are the ring's head.
const trefRecord = 1 << 31

// ring returns the head of h's ring of slots (0: none).
func (h *heap) ring() uint32 { return h.holds &^ trefRecord }

// setRing makes s the head of h's ring of slots.
func (h *heap) setRing(s uint32) { h.holds = h.holds&trefRecord | s }

// trefBatch is how many slots a heap without a spare takes from the
// table at once.
const trefBatch = 8

// trefKeep is how many spare slots a heap keeps on its ring when it is
// freed: its Exec, recycled with its task record, takes them for its next
// task's spawns without the table's lock (a chained spawn holds one).
const trefKeep = 4

// dropHolds releases every task reference h holds (the heap is being
// freed): up to keep of its slots stay on its ring as spares, the others
// go back to the table.
func (h *heap) dropHolds(keep int) {
	head := h.ring()
	if head == 0 {
		return
	}
	if sl := trefAt(uint64(head)); sl.next == head && keep > 0 { // one slot (a chained spawn's)
		if h.endHold(head, sl) {
			h.setRing(0) // retired
			trefGive([]uint32{head})
		}
		return
	}
	// Release the held slots; the retired ones leave the ring.
	var back []uint32
	n := 0
	last := trefAt(uint64(head)).prev
	for s := head; ; {
		sl := trefAt(uint64(s))
		next := sl.next
		if h.endHold(s, sl) {
			h.unlink(s, sl)
			back = append(back, s) // trefGive counts it, frees none
		} else {
			n++
		}
		if s == last {
			break
		}
		s = next
	}
	// All the slots left are spares: keep keep of them.
	for ; n > keep; n-- {
		s := h.ring()
		h.unlink(s, trefAt(uint64(s)))
		back = append(back, s)
	}
	trefGive(back)
}

// endHold ends h's hold of slot s, if it holds it, telling the task hook,
// and reports whether s is retired (at its last generation).
func (h *heap) endHold(s uint32, sl *trefSlot) (retired bool) {
	if sl.word.Load()&1 != 0 {
		obj := sl.obj
		h.unhold(s, sl)
		h.noteDrop(obj)
	}
	return sl.word.Load()>>1 == trefGenMax
}

// DropTaskRefSlots gives the spare task reference slots e kept when its
// task ended back to the table: call it before e is let go (to a pool the
// garbage collector may empty) rather than reused.
func (e *Exec) DropTaskRefSlots() { e.heap.dropHolds(0) }

// taskRefs counts the task references h holds (tests).
func (h *heap) taskRefs() (held, spare int) {
	if h.ring() == 0 {
		return 0, 0
	}
	s := h.ring()
	for {
		sl := trefAt(uint64(s))
		if sl.word.Load()&1 != 0 {
			held++
		} else {
			spare++
		}
		if s = sl.next; s == h.ring() {
			return held, spare
		}
	}
}

// explainTaskRef is explain for a task reference x.
func (h *heap) explainTaskRef(x uint64, w string) string {
	if h.taskRef(x) != nil {
		return fmt.Sprintf("wrong kind: want %s got task", w)
	}
	return fmt.Sprintf("stale task reference %#x: it was freed (want %s)", x, w)
}
