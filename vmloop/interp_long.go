package vmloop

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unsafe"
)

// Instructions whose work grows with their operands: the allocating ones
// (SCONCAT STOB BTOS BNEW BSLICE ANEW, and ITOS) and the cycle check of
// ASETR. Each charges its real work (docs/ISA.md, costs and limits) and,
// when that work is larger than one chunk, runs in chunks: between two
// chunks it looks at the budget and the stop flag, and when either says
// stop it saves its progress in the Exec (bulkState) and returns
// opPreempt with pc still at the instruction; the next Run resumes it
// where it stopped, without charging its base cost again. So no
// instruction runs longer than one chunk past a spent budget
// (TestLongStepsAreChunked counts the work between two preemptions;
// BenchmarkLongStepTicker in package bench measures what a 1 ms ticker
// beside such a step sees).

// charge returns the bulk cost of n bytes: ceil(n/64).
func charge(n int64) int64 { return (n + 63) >> 6 }

// walkChunk is the number of array elements the cycle check of ASETR
// visits between two looks at the budget. An element costs a load and a
// handle check in the object table (a likely cache miss in a large
// graph), so the chunk is smaller than bulkChunk's 64 KiB of bytes.
const walkChunk = 4096

// walkCharge returns the cost of n array elements visited by the cycle
// check: one reduction per element, which is about the time of an
// ordinary instruction when the table is cached and a few times less
// than its cache miss.
func walkCharge(n int64) int64 { return n }

// zeroChunk is the source of the chunked zeroing of BNEW and ANEW.
var zeroChunk = strings.Repeat("\x00", bulkChunk)

// allocOp runs the allocating instructions SCONCAT, STOB, BTOS, ITOS, BNEW,
// BSLICE, LDB and ANEW: each checks the heap limit before it allocates and
// charges ceil(n/64) for n bytes copied or zeroed (8 bytes per element for
// ANEW). A payload over bulkChunk bytes is made in chunks (see above):
// the destination is allocated without zeroing (strings.Builder.Grow) and
// its size is reserved in the heap's accounted bytes until the object is
// made, so a task never holds more than its heap limit, even between two
// chunks.
func (e *Exec) allocOp(ins Instr, r regs, pc int, left int64) (int64, opStatus) {
	h := &e.heap
	// The payload is the concatenation of src[0] and src[1] (zeroChunk
	// repeated when zero is set), n bytes; size is its accounted size.
	var src [2]string
	var n int64
	zero := false
	kind := KindString
	switch ins.Op() {
	case SCONCAT:
		b := h.get(r.ref(ins.B()), KindString)
		if b == nil {
			e.badHandle(r.ref(ins.B()), KindString)
			return left, opTrap
		}
		c := h.get(r.ref(ins.C()), KindString)
		if c == nil {
			e.badHandle(r.ref(ins.C()), KindString)
			return left, opTrap
		}
		src = [2]string{b.str(), c.str()}
		n = int64(len(src[0])) + int64(len(src[1]))
	case ITOS:
		s := strconv.FormatInt(r.i(ins.B()), 10)
		x := h.newString(s)
		if x == 0 {
			e.x().trap = h.allocFail(objSize(s, "", 0, 0))
			return left, opTrap
		}
		r.setRef(ins.A(), x)
		return left, opOK
	case STOB:
		b := h.get(r.ref(ins.B()), KindString)
		if b == nil {
			e.badHandle(r.ref(ins.B()), KindString)
			return left, opTrap
		}
		src[0], n, kind = b.str(), int64(b.n), KindBytes
	case BTOS:
		b := h.get(r.ref(ins.B()), KindBytes)
		if b == nil {
			e.badHandle(r.ref(ins.B()), KindBytes)
			return left, opTrap
		}
		src[0], n = bytesView(b.bytes()), int64(b.n)
	case LDB:
		k := e.prog.KBytes[ins.D()]
		src[0], n, kind = bytesView(k), int64(len(k)), KindBytes
	case BNEW:
		if n = r.i(ins.B()); n < 0 {
			e.x().trap = TrapInfo{Code: TrapBounds, Msg: fmt.Sprintf("bnew length %d", n)}
			return left, opTrap
		}
		zero, kind = true, KindBytes
	case BSLICE:
		b := h.get(r.ref(ins.B()), KindBytes)
		if b == nil {
			e.badHandle(r.ref(ins.B()), KindBytes)
			return left, opTrap
		}
		lo, hi := r.i(ins.C()), r.i(ins.D0())
		if lo < 0 || lo > hi || hi > int64(len(b.bytes())) {
			e.x().trap = TrapInfo{Code: TrapBounds, Msg: fmt.Sprintf("bslice [%d:%d] of length %d", lo, hi, len(b.bytes()))}
			return left, opTrap
		}
		src[0], n, kind = bytesView(b.bytes()[lo:hi]), hi-lo, KindBytes
	case ANEW:
		m := r.i(ins.B())
		if arraySize(m) < 0 {
			if m < 0 {
				e.x().trap = TrapInfo{Code: TrapBounds, Msg: fmt.Sprintf("anew length %d", m)}
				return left, opTrap
			}
			e.x().trap = h.allocFail(math.MaxInt64)
			return left, opTrap
		}
		n, zero, kind = 8*m, true, KindArrayI64+Kind(ins.C()-uint8(TI64))
	}
	size := objHeader + n
	if n > h.bnd.limit {
		size = n // the limit message names the payload (BNEW of an absurd length)
	}

	fnIdx := e.frames[e.fp].fn
	bs := &e.x().bulk
	var sb *strings.Builder
	var done int64
	if bs.on && bs.dst != nil && bs.fn == fnIdx && bs.pc == pc {
		sb, done = bs.dst, bs.done
		left++ // the instruction was charged when it started
		h.bytes -= bs.size
	} else {
		if !h.fits(size) {
			e.x().trap = h.allocFail(size)
			return left, opTrap
		}
		if n <= bulkChunk {
			return left - charge(n), e.allocSmall(ins, r, kind, src, n, zero)
		}
		sb = new(strings.Builder)
		sb.Grow(int(n))
	}
	*bs = bulkState{}
	for done < n {
		k := min(n-done, bulkChunk)
		if zero {
			sb.WriteString(zeroChunk[:k])
		} else {
			writeRange(sb, src, done, k)
		}
		done += k
		left -= charge(k)
		if done < n && (left <= 0 || e.stop.Load()) {
			h.bytes += size // reserved until the object is made
			*bs = bulkState{on: true, fn: fnIdx, pc: pc, done: done, dst: sb, size: size}
			return left, opPreempt
		}
	}
	s := sb.String()
	var x uint64
	switch kind {
	case KindString:
		x = h.newString(s)
	case KindBytes:
		// The Builder's memory is a heap allocation of its own that
		// nothing else references; it becomes the buffer.
		x = h.newBytes(unsafe.Slice(unsafe.StringData(s), len(s)))
	default: // a large allocation: page aligned, so 8-byte aligned
		x = h.newArrayOf(kind, unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.StringData(s))), n/8))
	}
	if x == 0 {
		e.x().trap = h.allocFail(size)
		return left, opTrap
	}
	r.setRef(ins.A(), x)
	return left, opOK
}

// allocSmall makes the object of allocOp for a payload of at most
// bulkChunk bytes in one piece (the heap limit is checked).
func (e *Exec) allocSmall(ins Instr, r regs, kind Kind, src [2]string, n int64, zero bool) opStatus {
	h := &e.heap
	var x uint64
	switch {
	case kind == KindString:
		x = h.newString(src[0] + src[1])
	case kind == KindBytes && zero:
		x = h.newBytes(make([]byte, n))
	case kind == KindBytes:
		x = h.newBytes([]byte(src[0]))
	default:
		x = h.newArray(kind, int(n/8))
	}
	if x == 0 {
		e.x().trap = h.allocFail(objHeader + n)
		return opTrap
	}
	r.setRef(ins.A(), x)
	return opOK
}

// writeRange appends bytes [off, off+k) of src[0] ++ src[1] to sb.
func writeRange(sb *strings.Builder, src [2]string, off, k int64) {
	if a := int64(len(src[0])); off < a {
		m := min(k, a-off)
		sb.WriteString(src[0][off : off+m])
		off, k = a, k-m
	}
	if k > 0 {
		off -= int64(len(src[0]))
		sb.WriteString(src[1][off : off+k])
	}
}

// newArrayOf makes an array object of kind k owning a (zeroed by the caller).
func (h *heap) newArrayOf(k Kind, a []uint64) uint64 {
	x := h.alloc(k, objSize("", "", 0, len(a)))
	if x != 0 {
		h.at(x).setArr(a)
	}
	return x
}

// asetr stores a handle into a ref array. A non-null value must be live,
// and storing an array into an array it (transitively) contains, itself
// included, traps: task heaps stay acyclic so export can copy them. The
// containment check costs walkCharge(n) for n elements visited and runs in
// chunks of walkChunk elements (see above): its DFS stack and marks stay in
// the heap between two Runs, which nothing else touches while the task is
// preempted.
func (e *Exec) asetr(ins Instr, r regs, pc int, left int64) (int64, opStatus) {
	h := &e.heap
	ax := r.ref(ins.A())
	o := h.get(ax, KindArrayRef)
	if o == nil {
		e.badHandle(ax, KindArrayRef)
		return left, opTrap
	}
	i := r.i(ins.B())
	if uint64(i) >= uint64(len(o.arr())) {
		e.x().trap = TrapInfo{Code: TrapBounds, Msg: fmt.Sprintf("asetr index %d, length %d", i, len(o.arr()))}
		return left, opTrap
	}
	v := r.ref(ins.C())
	if v != 0 {
		vo := h.getLive(v)
		if vo == nil && h.ref(v) == nil {
			e.badHandle(v, KindVoid)
			return left, opTrap
		}
		if vo != nil && vo.kind == KindMap {
			e.x().trap = TrapInfo{Code: TrapHandle, Msg: "asetr: a map cannot be an array element (maps do not nest)"}
			return left, opTrap
		}
		if vo != nil && vo.kind == KindArrayRef {
			fnIdx := e.frames[e.fp].fn
			bs := &e.x().bulk
			if bs.on && bs.walk && bs.fn == fnIdx && bs.pc == pc {
				left++ // the instruction was charged when it started
			} else {
				h.reachStart(int32(v & handleIdxMask))
			}
			*bs = bulkState{}
			for {
				found, finished, n := h.reachMore(int32(ax&handleIdxMask), walkChunk)
				left -= walkCharge(int64(n))
				if found {
					e.x().trap = TrapInfo{Code: TrapHandle, Msg: "asetr: the stored array contains the target array (heaps must stay acyclic)"}
					return left, opTrap
				}
				if finished {
					break
				}
				if left <= 0 || e.stop.Load() {
					*bs = bulkState{on: true, fn: fnIdx, pc: pc, walk: true}
					return left, opPreempt
				}
			}
		}
	}
	o.arr()[i] = v
	return left, opOK
}
