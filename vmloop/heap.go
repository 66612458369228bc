package vmloop

import (
	"fmt"
	"github.com/jadevm/jade/internal/vmhook"
	"math"
	"unsafe"
)

// The task heap.
//
// Every task owns one heap: a table of objects named by handles. A handle
// is a uint64 held in a ref register:
//
//	bits  0..23  index into the object table (index 0 is reserved: handle 0 is null)
//	bits 24..39  generation of the slot when the handle was made
//	bits 40..63  owner id of the heap (the owner given to NewExec, truncated)
//
// Every use of a handle checks owner, generation and kind and traps
// (TrapHandle) on any mismatch, so a handle that was freed (stale), belongs
// to another task (foreign) or names an object of another kind can never be
// dereferenced. Freed slots go on a free list and their generation is bumped;
// a slot whose generation would wrap is retired instead, so a stale handle
// can never become valid again.
//
// A ref register naming a task holds a task reference instead (index bits
// zero: no handle has index 0 but null): a slot of vmloop's task reference
// table and its generation, held by this heap (taskref.go). It accounts
// no heap bytes; the handle lookups above never match it, and the places
// that take any reference (FREE, a copy out, ASETR, a map value, ArgObj
// of a task) look it up in the table.
//
// Objects never leave their heap: every boundary (spawn arguments, join
// results, thrown errors, intrinsic arguments and results) goes through
// export (handle -> Value, deep copy of bytes and arrays, strings shared) and
// import (Value -> handle). The heap counts the bytes of its objects against
// Limits.MaxHeapBytes with the same formula as Value.Size.

const (
	handleGenShift   = 24
	handleOwnerShift = 40
	handleIdxMask    = 1<<24 - 1
	handleGenMask    = 1<<16 - 1
	handleOwnerMask  = 1<<24 - 1

	// maxObjects bounds the object table (24 index bits, index 0 reserved).
	maxObjects = 1 << 24

	// objHeader is the accounted size of an object without its payload;
	// it matches the constant in Value.Size.
	objHeader = 32
)

// object is one slot of the object table. Only the fields of its kind are
// used. The payload is one view (p, n, c) of whatever the kind holds — a
// string or an error message (p, n), bytes or array elements as bit
// patterns (p, n, c: a []byte or []uint64 without its slice header; ref
// arrays hold handles) — so a slot is 56 bytes, not the 96 that a string,
// a []byte and a []uint64 side by side took. x is the error kind (a
// string) or the scheduler's object for tasks, events and ext.
type object struct {
	p    unsafe.Pointer
	x    any
	n, c uint32 // length and capacity of the payload (maxObjectBytes bounds them)
	mark uint32 // DFS epoch (cycle check of ASETR)
	next int32  // free list link while the slot is free
	gen  uint16
	kind Kind // KindVoid: free or never used
	// sampled: the heap profile sampled this object (profile.go)
	sampled bool
}

// maxObjectBytes is the accounted size of the largest object (4 GiB − 1),
// so that a payload's length and capacity fit the object's 32-bit fields
// (a 48 B slot). A larger allocation traps like one over the heap limit.
const maxObjectBytes = 1<<32 - 1

// str returns the string (KindString) or message (KindError).
func (o *object) str() string { return unsafe.String((*byte)(o.p), int(o.n)) }

// bytes returns the contents of a KindBytes object (aliasing it).
func (o *object) bytes() []byte { return unsafe.Slice((*byte)(o.p), int(o.c))[:o.n] }

// arr returns the elements of an array object (aliasing them).
func (o *object) arr() []uint64 { return unsafe.Slice((*uint64)(o.p), int(o.c))[:o.n] }

func (o *object) setStr(s string) {
	o.p, o.n, o.c = unsafe.Pointer(unsafe.StringData(s)), uint32(len(s)), 0
}

func (o *object) setBytes(b []byte) {
	o.p, o.n, o.c = unsafe.Pointer(unsafe.SliceData(b)), uint32(len(b)), uint32(min(cap(b), maxObjectBytes))
}

func (o *object) setArr(a []uint64) {
	o.p, o.n, o.c = unsafe.Pointer(unsafe.SliceData(a)), uint32(len(a)), uint32(min(cap(a), maxObjectBytes))
}

// heap is a task's object table.
type heap struct {
	// objs is the first chunk of the object table: the object of handle
	// index i (1-based; 0 is null) is objs[i-1] for i <= len(objs), else
	// in side.far (heap_table.go). len(objs) < chunkLen while far is empty.
	objs  []object
	bytes int64     // accounted bytes of live objects
	side  *heapSide // &noSide until first used: the DFS stack, outgrown tables, far chunks
	// bnd holds Limits.MaxHeapBytes (bnd.limit) and the engine's budget
	// (bnd.mem; nil: none), shared with the engine's other heaps
	// (boundsFor); nil only before the first init. granted is what this
	// heap has taken from bnd.mem for its objects, always >= bytes while
	// bnd.mem is set (budget.go).
	bnd     *heapBounds
	granted int64
	owner   uint32 // owner id, already truncated to 24 bits
	// holds is the head of the ring of shared reference slots (task and
	// event references) the heap holds or keeps spare (taskref.go: ring,
	// setRing; 0 when none; spare ones first, held ones at the tail), and
	// bit trefRecord: the heap's Exec is a task record's.
	holds uint32
	free  int32 // first free slot, 0 when none
	// shared counts the live task, event and ext objects (dropTasks
	// visits the slots only when there are some).
	shared int32
}

// heapSide is the part of a heap that few tasks use (behind a pointer, so
// that a parked task's Exec stays small).
type heapSide struct {
	stack []int32 // DFS work stack of reaches, reused
	// cur is the array reachMore is scanning (0: none), from element off
	cur int32
	off int
	// retired holds the tables this heap outgrew that are of a pooled size,
	// cleared when outgrown (so that nothing an object referenced stays
	// reachable through a copy of it: a task freeing its objects must
	// free their memory, MaxHeapBytes bounds what it holds). They go to
	// tablePools when the heap is freed, not while it lives: a table in
	// the pool may be handed to another worker's task at once, and the
	// heap is the only place that knows no *object into it is still held.
	// Their own size is bounded by the current table's (halves).
	retired [][]object
	// prof is the heap's sampling state while heap sampling is on
	// (profile.go).
	prof *heapProf
	// far holds the object table past its first chunk, in chunks that
	// never move (heap_table.go): the slot of 0-based index i >= chunkLen
	// is far[i>>chunkShift][i&chunkMask] (far[0] is nil: the first chunk
	// is heap.objs), made when i < chunkLen+farLen, else zero (generation
	// 0, which no handle has); farShared[c] counts the live task, event
	// and ext objects of far[c]. far is empty until the first chunk is
	// full.
	far       []*[chunkLen]object
	farShared []int32
	farLen    int32
	epoch     uint32 // current DFS epoch (heap_reach.go)
}

func (h *heap) sidePart() *heapSide {
	if h.side == nil || h.side == &noSide {
		h.side = new(heapSide)
	}
	return h.side
}

// noSide is the side part of every heap that has none of its own (so that
// a handle lookup needs no nil check): sidePart replaces it before
// anything is written, and it is never written.
var noSide heapSide

// ownSide returns the heap's side part, or nil when it has none.
func (h *heap) ownSide() *heapSide {
	if h.side == &noSide {
		return nil
	}
	return h.side
}

func (h *heap) init(owner uint32, bnd *heapBounds) {
	h.owner = owner & handleOwnerMask
	h.bnd = bnd
	if bnd.mem != nil {
		h.granted = HeapGrant // the task's fixed share covers it
	}
	if h.side == nil {
		h.side = &noSide
	}
}

// handle builds the handle of slot i.
func (h *heap) handle(i int) uint64 {
	return uint64(h.owner)<<handleOwnerShift | uint64(h.slot(i).gen)<<handleGenShift | uint64(i)
}

// get returns the live object named by x if it has kind k, else nil.
//
// get, getLive and getArray are the interpreter's handle lookups, inlined
// at every use: each is kept within the compiler's inlining budget
// (go build -gcflags=-m=2), which is why the lookup of the slot is
// written out in each (heap_table.go: the first chunk, else the far
// chunk i>>chunkShift, whose slots not yet made have generation 0, which
// no handle has) and why the owner and generation are compared as one.
func (h *heap) get(x uint64, k Kind) *object {
	i := x&handleIdxMask - 1 // index 0 (null) wraps and fails both bounds
	var o *object
	if i < uint64(len(h.objs)) {
		o = &h.objs[i]
	} else if i>>chunkShift < uint64(len(h.side.far)) {
		o = &h.side.far[i>>chunkShift][i&chunkMask]
	} else {
		return nil
	}
	if x>>handleGenShift != uint64(h.owner)<<16|uint64(o.gen) || o.kind != k {
		return nil
	}
	return o
}

// getLive returns the live object named by x whatever its kind, else nil.
func (h *heap) getLive(x uint64) *object {
	i := x&handleIdxMask - 1
	var o *object
	if i < uint64(len(h.objs)) {
		o = &h.objs[i]
	} else if i>>chunkShift < uint64(len(h.side.far)) {
		o = &h.side.far[i>>chunkShift][i&chunkMask]
	} else {
		return nil
	}
	if x>>handleGenShift != uint64(h.owner)<<16|uint64(o.gen) || o.kind == KindVoid {
		return nil
	}
	return o
}

// getArray returns the live array named by x (any element type), else nil.
func (h *heap) getArray(x uint64) *object {
	i := x&handleIdxMask - 1
	var o *object
	if i < uint64(len(h.objs)) {
		o = &h.objs[i]
	} else if i>>chunkShift < uint64(len(h.side.far)) {
		o = &h.side.far[i>>chunkShift][i&chunkMask]
	} else {
		return nil
	}
	if x>>handleGenShift != uint64(h.owner)<<16|uint64(o.gen) || o.kind-KindArrayI64 > KindArrayRef-KindArrayI64 {
		return nil
	}
	return o
}

// explain says why handle x does not name a live object of kind want
// (want == KindVoid: any kind). It is the message of the TrapHandle.
func (h *heap) explain(x uint64, want Kind) string {
	w := want.String()
	switch want {
	case KindVoid:
		w = "an object"
	case anyArray:
		w = "an array"
	}
	if x == 0 {
		return "null handle (want " + w + ")"
	}
	if IsSharedRef(x) {
		return h.explainRef(x, w)
	}
	if own := x >> handleOwnerShift; own != uint64(h.owner) {
		return fmt.Sprintf("foreign handle %#x: owner %d, this task is %d (want %s)", x, own, h.owner, w)
	}
	i := x & handleIdxMask
	if i == 0 || i > uint64(h.slots()) {
		return fmt.Sprintf("invalid handle %#x: no object %d (want %s)", x, i, w)
	}
	o := h.slot(int(i))
	if uint64(o.gen) != (x>>handleGenShift)&handleGenMask || o.kind == KindVoid {
		return fmt.Sprintf("stale handle %#x: object %d was freed (want %s)", x, i, w)
	}
	return fmt.Sprintf("wrong kind: want %s got %s", w, o.kind)
}

// anyArray is the pseudo-kind explain takes for "an array of any element type".
const anyArray Kind = 0x80

// objSize is the accounted size of an object with the given payload.
func objSize(s string, aux string, nb, na int) int64 {
	return objHeader + int64(len(s)) + int64(len(aux)) + int64(nb) + 8*int64(na)
}

func (o *object) size() int64 {
	switch o.kind {
	case KindString:
		return objSize(o.str(), "", 0, 0)
	case KindError:
		aux, _ := o.x.(string)
		return objSize(o.str(), aux, 0, 0)
	case KindBytes:
		return objSize("", "", int(o.n), 0)
	case KindArrayI64, KindArrayF64, KindArrayRef:
		return objSize("", "", 0, int(o.n))
	case KindMap:
		return o.x.(*hmap).acct
	case KindTask:
		return 0 // as a task reference (taskref.go, Value.Size)
	}
	return objSize("", "", 0, 0)
}

// fits reports whether n more bytes stay within the heap limit and the
// engine's budget (taking from the budget what they need).
func (h *heap) fits(n int64) bool {
	return n >= 0 && n <= maxObjectBytes && n <= h.bnd.limit-h.bytes && h.cover(h.bytes+n)
}

// alloc takes a slot for an object of kind k and accounted size n. It
// returns 0 when the heap limit or the handle table is exhausted; the
// caller fills the payload through h.objs[handle&handleIdxMask].
func (h *heap) alloc(k Kind, n int64) uint64 {
	if !h.fits(n) {
		return 0
	}
	var i int
	var o *object
	if h.free != 0 {
		i = int(h.free)
		o = h.slot(i)
		h.free = o.next
	} else if len(h.objs) < chunkLen {
		if len(h.objs) == cap(h.objs) {
			h.grow()
		}
		h.objs = h.objs[:len(h.objs)+1]
		i = len(h.objs)
		o = &h.objs[i-1]
	} else {
		if i = h.farNew(); i == 0 {
			return 0
		}
		o = h.slot(i)
	}
	o.kind = k
	o.next = 0
	if o.gen == 0 {
		o.gen = 1
	}
	h.bytes += n
	if heapSampling.Load() {
		h.sample(i, n)
	}
	return h.handle(i)
}

func (h *heap) at(x uint64) *object { return h.slot(int(x & handleIdxMask)) }

// newString makes a string object sharing s.
func (h *heap) newString(s string) uint64 {
	x := h.alloc(KindString, objSize(s, "", 0, 0))
	if x != 0 {
		h.at(x).setStr(s)
	}
	return x
}

// newBytes makes a bytes object owning b.
func (h *heap) newBytes(b []byte) uint64 {
	x := h.alloc(KindBytes, objSize("", "", len(b), 0))
	if x != 0 {
		h.at(x).setBytes(b)
	}
	return x
}

// newError makes an error object.
func (h *heap) newError(kind, msg string) uint64 {
	x := h.alloc(KindError, objSize(msg, kind, 0, 0))
	if x != 0 {
		o := h.at(x)
		o.setStr(msg)
		o.x = kind
	}
	return x
}

// newArray makes a zeroed array of n elements of array kind k. The
// caller has checked n against the heap limit with arraySize.
func (h *heap) newArray(k Kind, n int) uint64 {
	x := h.alloc(k, objSize("", "", 0, n))
	if x != 0 {
		h.at(x).setArr(make([]uint64, n))
	}
	return x
}

// newExt makes a task, event or ext object holding the scheduler's obj.
func (h *heap) newExt(k Kind, obj any) uint64 {
	n := int64(objHeader)
	if k == KindTask {
		n = 0 // as a task reference (taskref.go, Value.Size)
	}
	x := h.alloc(k, n)
	if x != 0 {
		h.at(x).x = obj
		h.noteShared(int(x&handleIdxMask), +1)
		noteTask(k, obj, +1)
	}
	return x
}

// noteTask tells taskRefs about an object of kind k holding obj, if it
// names a task, and an ext object that counts its handles (ExtRefs).
func noteTask(k Kind, obj any, delta int) {
	switch {
	case k == KindTask && vmhook.TaskRefs != nil:
		vmhook.TaskRefs(obj, delta)
	case k == KindExt && delta != 0:
		if r, ok := obj.(ExtRefs); ok {
			r.ExtRef(delta)
		}
	}
}

// ExtRefs is implemented by a runtime object behind KindExt handles that
// wants to know how many heap objects name it: ExtRef(+1) when a task's
// heap makes one (the intrinsic that made the object returned it, or a
// copy brought it in), ExtRef(-1) when one is freed or its heap is
// dropped. A copy out of a heap (a result, a spawn argument) counts only
// once it is made in the receiving heap. The scheduler's periodic jobs
// end when the last one goes.
type ExtRefs interface {
	ExtRef(delta int)
}

// release frees the live object x. It reports false when x names none.
func (h *heap) release(x uint64) bool {
	if IsSharedRef(x) {
		return h.dropRef(x)
	}
	o := h.getLive(x)
	if o == nil {
		return false
	}
	i := int32(x & handleIdxMask)
	if o.kind >= KindTask && o.kind <= KindExt {
		noteTask(o.kind, o.x, -1)
		h.noteShared(int(i), -1)
	}
	h.bytes -= o.size()
	h.uncover()
	if o.sampled {
		h.sampleFree(i)
	}
	*o = object{gen: o.gen + 1, mark: o.mark}
	if o.gen != 0 { // a slot whose generation wrapped is retired
		o.next = h.free
		h.free = i
	}
	return true
}

// reset releases every object (the task completed) in a time bounded by
// the table's first chunk, its number of chunks and its live task and ext
// objects, not by its objects: their memory is left to the garbage
// collector with the chunks, and the budget is given back in one
// subtraction (giveAll).
func (h *heap) reset() {
	h.freeSamples()
	h.dropHolds(trefKeep)
	h.dropTasks()
	h.releaseTables()
	h.objs = nil
	h.free = 0
	h.bytes = 0
	h.shared = 0
	h.side = &noSide
	h.giveAll()
}

// importShared makes a reference to the runtime's obj of kind k (task,
// event, ext), shared with every other heap that names it: a task or
// event reference for a task or an event (taskref.go), else an object.
func (h *heap) importShared(k Kind, obj any) (uint64, error) {
	switch k {
	case KindTask:
		if x := h.holdTask(obj); x != 0 {
			return x, nil
		}
	case KindEvent:
		if x := h.holdEvent(obj); x != 0 {
			return x, nil
		}
	}
	x := h.newExt(k, obj)
	if x == 0 {
		return 0, h.allocFail(objHeader)
	}
	return x, nil
}

// arraySize is the accounted size of a new array of n elements, or -1 if n
// is negative or absurd.
func arraySize(n int64) int64 {
	if n < 0 || n > (math.MaxInt64-objHeader)/8 {
		return -1
	}
	return objHeader + 8*n
}
