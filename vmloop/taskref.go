package vmloop

import (
	"fmt"
	"sync/atomic"

	"github.com/jadevm/jade/internal/relstore"
	"github.com/jadevm/jade/internal/vmhook"
)

// Task and event references that are not heap objects.
//
// A ref register naming a task or an event holds a shared reference, not
// a handle to a heap object: the runtime's object (the scheduler's task or
// event) lives in a slot of one table shared by every heap (trefTable),
// and the reference is the slot's index, the kind and the slot's
// generation:
//
//	bits  0..23  zero (a handle's index: no handle has index 0 but null)
//	bits 24..46  the slot (1 <= slot < 2^23)
//	bit  47      the kind: set for an event, clear for a task
//	bits 48..63  the slot's generation when the reference was made
//
// A slot belongs to one heap at a time, its holder: the heap that imported
// the task or event (a spawn's result, event.new's, a copy bringing one
// in: a spawn's argument, a joined result, a channel message, a map value
// or an array element copied). While the holder holds it, the slot's word
// is gen<<2 | kind<<1 | 1 (kind 1: an event) and a task is counted once
// (the task hook, +1); freeing the reference (FREE) or the holder's end
// releases the hold: the word becomes (gen+1)<<2 (a task: the hook, -1),
// so every copy of the reference is stale from then on. A reference is
// used only when the slot's word is its generation and kind, held, and the
// slot's holder is the heap using it (the owner id): a stale reference —
// freed, its holder ended, the slot held again by another heap, for
// another task or event — fails like a stale handle (TrapHandle, "stale
// task reference", "stale event reference"), never reaching the object the
// slot names now; one of the other kind, or where a string or an array is
// wanted, fails as a handle of the wrong kind. A slot whose generation
// would wrap is retired, never held again (as a heap slot is,
// heap.release).
//
// So a spawn's result costs no heap slot, no object accounting and no
// budget, and an event costs no heap slot and no handle table: only its
// accounted size, objHeader, as the event object it replaces was charged
// (the heap's bytes and the engine's budget, given back when the hold
// ends; Value.Size and every copy count it the same), so that a task
// making events is still bounded by its heap limit. The holder's slots
// are on its ring (heap.holds): spare ones at the head, held ones after
// them, so that a hold takes the head and a task's end walks back from
// the tail over what it held only. Its released slots stay on the ring
// for its next reference; when it ends, up to trefKeep stay for its
// Exec's next task and the others go back to the table's free list. The
// table's slots run out only after 2^23 of them are held at once or
// retired (in chunks of 1,024 slots of one kind: trefTable); a heap then
// makes a task or event object as before (newExt), which every use also
// accepts. (The reference gave a slot bit to the
// kind: 2^23 × 2^16 references over the process's life, docs/ISA.md.)
//
// An event needs no count of its references (sched.Event is memory the
// garbage collector frees once no heap, waiter or host value names it),
// so only a task's hold tells the task hook.
//
// Concurrency: only the holder writes a held slot (its task runs on one
// worker at a time), and only the holder's references can match its word;
// a stale reference on another worker reads only the word (atomic), and a
// slot passes from heap to heap through the free list's lock. The holder
// writes the word with a release store (internal/relstore): no load of
// its own has to be ordered after it, so the locked instruction of
// sync/atomic's Store buys nothing (two to four of them per spawn,
// BenchmarkChainedSpawn).

const (
	trefSlotShift = 24
	trefEvShift   = 47
	trefGenShift  = 48
	trefSlotMask  = 1<<23 - 1
	trefGenMax    = 1<<16 - 1
	// trefEvBit marks a reference to an event.
	trefEvBit = 1 << trefEvShift

	// The slot's word: held, the kind (an event) while held, and the
	// generation above them.
	trefHeld      = 1
	trefWordEv    = 2
	trefWordShift = 2

	trefChunkShift = 10
	trefChunkLen   = 1 << trefChunkShift
	trefChunkMask  = trefChunkLen - 1
	// trefMaxSlots bounds the table (23 slot bits; slot 0 is not used).
	trefMaxSlots = 1 << 23
	// trefDirLen is the number of chunks the table may have.
	trefDirLen = trefMaxSlots >> trefChunkShift
)

// trefSlot is one slot of the shared reference table.
type trefSlot struct {
	obj any // the task or event, while held; written by the holder only
	// word is gen<<2 | ev<<1 | held: gen counts the holds released, held
	// is set while a heap holds the slot, ev while the hold is an
	// event's. A retired slot's word stays trefGenMax<<2, which no
	// reference matches (held is clear).
	word  atomic.Uint32
	owner uint32 // the holder's owner id (heap.owner)
	// prev, next link the holder's ring of slots (heap.holds); touched by
	// the holder only. A free slot's next links its chunk's free list
	// (trefTable.free, under its lock).
	prev, next uint32
}

// IsSharedRef reports whether x, a ref register's bits, is a shared
// reference, to a task or an event (not a heap handle, not null).
func IsSharedRef(x uint64) bool { return x != 0 && x&handleIdxMask == 0 }

// refKind is the kind of the shared reference x.
func refKind(x uint64) Kind {
	if x&trefEvBit != 0 {
		return KindEvent
	}
	return KindTask
}

// holdTask makes a task reference to obj held by h, or returns 0 when the
// table has no slot left (the caller makes a task object instead).
func (h *heap) holdTask(obj any) uint64 {
	x := h.hold(obj, 0)
	if x != 0 {
		noteTask(KindTask, obj, +1)
	}
	return x
}

// holdEvent makes an event reference to obj held by h, charging its
// accounted size (objHeader) as an event object was; it returns 0 when
// the heap cannot take the bytes or the table has no slot left (the
// caller makes an event object instead, which fails the same way on the
// bytes).
func (h *heap) holdEvent(obj any) uint64 {
	if !h.fits(objHeader) {
		return 0
	}
	x := h.hold(obj, trefEvBit)
	if x != 0 {
		h.bytes += objHeader
	}
	return x
}

// hold makes a reference of kind ev (0 or trefEvBit) to obj held by h,
// or returns 0 when the table has no slot left. It tells no hook.
func (h *heap) hold(obj any, ev uint64) uint64 {
	s := h.ring()
	if s != 0 {
		sl := trefAt(uint64(s))
		if w := sl.word.Load(); w&trefHeld == 0 {
			// A spare at the head: it becomes the tail. Its word is
			// its generation (unhold).
			h.setRing(sl.next)
			sl.obj = obj
			sl.owner = h.owner
			relstore.Uint32(&sl.word, w|uint32(ev>>(trefEvShift-1))|trefHeld)
			return uint64(w>>trefWordShift)<<trefGenShift | ev | uint64(s)<<trefSlotShift
		}
	}
	return h.holdNew(obj, ev)
}

// holdNew is hold for a heap without a spare: a slot from the table, or,
// for a heap that holds two already (a fan-out), a batch (one lock for
// trefBatch spawns); spares at the head, the first taken. (A chained
// spawn's link holds two: its argument and its child.)
func (h *heap) holdNew(obj any, ev uint64) uint64 {
	n := 1
	if s := h.ring(); s != 0 && trefAt(uint64(s)).next != s {
		n = trefBatch
	}
	var buf [trefBatch]uint32
	k := uint8(trefKindTask)
	if ev != 0 {
		k = trefKindEvent
	}
	got := trefTake(buf[:0], n, k)
	if len(got) == 0 {
		return 0
	}
	for _, g := range got {
		h.linkHead(g, trefAt(uint64(g)))
	}
	return h.hold(obj, ev)
}

// SpawnDetached reports whether the pending request is a detached spawn
// (SpawnDetached in its field B): the caller makes no reference to the
// child and counts none, and CompleteTask writes nothing.
func (e *Exec) SpawnDetached() bool {
	// reqDst first: a spawn with a handle has one, and the test of
	// every spawn (sched's makeTask) ends at it.
	return e.reqDst < 0 && e.req.Op == SPAWN && e.state == stRequest
}

// CompleteTask completes the pending request (a spawn) with a task
// reference to obj, the task it made, whose hold the caller has counted
// already: the task hook is not told of it (one call and an atomic add
// fewer per spawn). Where the table has no slot left the reference is an
// object, as Complete makes, and the count taken for it is dropped
// (TaskRefs, -1), as it is for a request without a ref destination
// (never a verified spawn's). A detached spawn (SpawnDetached), for
// which the caller counted no reference, completes with nothing written.
func (e *Exec) CompleteTask(obj any) error {
	if e.state != stRequest || e.reqDst < 0 || e.reqDstT != TRef {
		return e.completeTaskElse(obj)
	}
	// (The hold stays on its line: the kept profile, pgo/jade.pgo, names
	// hot calls by their line in the function.)
	x := e.heap.hold(obj, 0)
	if x == 0 {
		return e.completeTaskElse(obj) // the table is full: an object
	}
	e.state = stReady
	e.setAbs(e.frames[e.fp].base+int(e.reqDst), x, TRef)
	return nil
}

// completeTaskElse is CompleteTask for a request that takes no task
// reference in a register: a detached spawn completes with nothing
// written; anything else as Complete does, the count taken for obj
// dropped. Out of line: CompleteTask is on every spawn's path.
func (e *Exec) completeTaskElse(obj any) error {
	if e.SpawnDetached() {
		e.state = stReady
		return nil
	}
	err := e.Complete(Ext(KindTask, obj))
	noteTask(KindTask, obj, -1)
	return err
}

// ref returns the slot of x when x is a shared reference (either kind)
// h holds, else nil.
func (h *heap) ref(x uint64) *trefSlot {
	return h.refOf(x, uint32(x>>(trefEvShift-1))&trefWordEv|trefHeld)
}

// refOf returns the slot of x when x is a shared reference h holds whose
// hold's kind and held bits are kw (refWord of its kind), else nil. Null
// names slot 0, which is never held. (Small enough to inline: every use
// of a reference reads it.)
func (h *heap) refOf(x uint64, kw uint32) *trefSlot {
	c := (*[trefChunkLen]trefSlot)(atomic.LoadPointer(&trefTable.dir[x>>(trefSlotShift+trefChunkShift)&(trefDirLen-1)]))
	if x&handleIdxMask != 0 || c == nil {
		return nil // a handle, or a chunk not made
	}
	sl := &c[x>>trefSlotShift&trefChunkMask]
	if sl.word.Load() != uint32(x>>trefGenShift)<<trefWordShift|kw || sl.owner != h.owner {
		return nil
	}
	return sl
}

// refWord is the word of a held slot's kind bits for a reference of kind
// k: trefHeld for a task, with trefWordEv for an event; 0 for any other
// kind (no reference names one).
func refWord(k Kind) uint32 {
	switch k {
	case KindTask:
		return trefHeld
	case KindEvent:
		return trefHeld | trefWordEv
	}
	return 0
}

// dropRef releases the shared reference x (FREE, an import rolled back):
// every copy of it is stale from now on, and an event's accounted bytes
// are given back. It reports false when x is not a reference h holds.
func (h *heap) dropRef(x uint64) bool {
	sl := h.ref(x)
	if sl == nil {
		return false
	}
	s := uint32(x >> trefSlotShift & trefSlotMask)
	if h.endHold(sl) {
		h.unlink(s, sl) // retired
		trefGive([]uint32{s})
	} else if h.ring() != s {
		// To the head, a spare for the next reference.
		h.unlink(s, sl)
		h.linkHead(s, sl)
	}
	if x&trefEvBit != 0 {
		h.bytes -= objHeader
		h.uncover()
	}
	return true
}

// unhold ends the hold of slot sl and returns its word (the generation
// moves on unless it would wrap: the slot is then retired).
func unhold(sl *trefSlot) uint32 {
	sl.obj = nil
	gen := sl.word.Load() >> trefWordShift
	if gen < trefGenMax {
		gen++
	}
	relstore.Uint32(&sl.word, gen<<trefWordShift)
	return gen << trefWordShift
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

// dropHolds releases every reference h holds (the heap is being freed;
// an event's bytes go with the heap's): up to keep of its slots stay on
// its ring as spares, the others go back to the table.
func (h *heap) dropHolds(keep int) {
	head := h.ring()
	if head == 0 {
		return
	}
	// The held slots are at the ring's tail, after the spares: end them
	// walking back from it, so that a task's end costs what it held (a
	// chained spawn's link: its argument and its child), not its spares.
	held, retired := 0, false
	s := trefAt(uint64(head)).prev
	for {
		sl := trefAt(uint64(s))
		w := sl.word.Load()
		if w&trefHeld == 0 {
			break // s and the slots before it are spare
		}
		// endHold's work, in line: a call per held slot cost a chained
		// spawn's link 1 % more instructions (BenchmarkChainedSpawn).
		obj := sl.obj
		if unhold(sl)>>trefWordShift == trefGenMax {
			retired = true
		}
		if w&trefWordEv == 0 {
			h.noteDrop(obj)
		}
		held++
		if s == head {
			s = 0 // all were held
			break
		}
		s = sl.prev
	}
	if retired || held > keep || s != 0 && ringLonger(head, keep) {
		h.trimRing(keep)
	}
}

// ringLonger reports whether the ring from head has more than n slots.
func ringLonger(head uint32, n int) bool {
	c := 1
	for s := trefAt(uint64(head)).next; s != head; s = trefAt(uint64(s)).next {
		if c++; c > n {
			return true
		}
	}
	return c > n
}

// trimRing gives the retired slots of h's ring (none held) back to the
// table, and the spares beyond keep: one walk that reads each slot once,
// then a ring of the kept ones (a fan-out's spawner ends holding
// thousands: unlinking them one by one read and wrote both neighbours of
// each, BenchmarkSpawnMany).
func (h *heap) trimRing(keep int) {
	var kept [trefKeep]uint32
	nk, most := 0, min(keep, trefKeep)
	head := h.ring()
	back := make([]uint32, 0, 16)
	for s := head; ; {
		sl := trefAt(uint64(s))
		next := sl.next
		switch {
		case sl.word.Load()>>trefWordShift == trefGenMax:
			back = append(back, s) // trefGive counts it, frees none
		case nk < most:
			kept[nk] = s
			nk++
		default:
			back = append(back, s)
		}
		if next == head {
			break
		}
		s = next
	}
	h.setRing(0)
	for i := nk - 1; i >= 0; i-- { // the ring's order kept
		h.linkHead(kept[i], trefAt(uint64(kept[i])))
	}
	trefGive(back)
}

// endHold ends h's hold of slot sl, if it holds it, telling the task hook
// of a task's, and reports whether sl is retired (at its last
// generation). An event's accounted bytes are the caller's to give back.
func (h *heap) endHold(sl *trefSlot) (retired bool) {
	w := sl.word.Load()
	if w&trefHeld != 0 {
		obj := sl.obj
		if unhold(sl)>>trefWordShift == trefGenMax {
			retired = true
		}
		if w&trefWordEv == 0 {
			h.noteDrop(obj)
		}
		return retired
	}
	return w>>trefWordShift == trefGenMax
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
		if sl.word.Load()&trefHeld != 0 {
			held++
		} else {
			spare++
		}
		if s = sl.next; s == h.ring() {
			return held, spare
		}
	}
}

// explainRef is explain for a shared reference x.
func (h *heap) explainRef(x uint64, w string) string {
	if h.ref(x) != nil {
		return fmt.Sprintf("wrong kind: want %s got %s", w, refKind(x))
	}
	return fmt.Sprintf("stale %s reference %#x: it was freed (want %s)", refKind(x), x, w)
}
