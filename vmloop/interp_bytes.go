package vmloop

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unsafe"
)

// The interpreter half of the bounded byte and string primitives of ABI
// 1.3 (isa_bytes.go). They run out of line in both loops (the C loop exits
// to Go on them), so their semantics exist once. BFINDR, BCMP, BCASECMP,
// BTOI and STOI work in chunks of bulkChunk bytes like bulkOp: between two
// chunks a spent budget or a Stop saves the progress in bulkState and
// returns opPreempt with pc still at the instruction, and the next Run
// resumes there without charging the base cost again.

// bytesOp runs BFINDR, BCMP, BCASECMP, BTOI, STOI and ITOB.
func (e *Exec) bytesOp(ins Instr, r regs, pc int, left int64) (int64, opStatus) {
	h := &e.heap
	fnIdx := e.frames[e.fp].fn
	bs := &e.x().bulk
	var done int64
	var acc uint64
	var fs *findState
	if bs.on && bs.fn == fnIdx && bs.pc == pc {
		done, acc, fs = bs.done, bs.acc, bs.find
		left++ // the instruction was charged when it started
	}
	*bs = bulkState{}
	// spent saves the progress (d of n bytes done) and says stop, when the
	// budget is spent or Stop was called and work is left.
	spent := func(d, n int64, acc uint64) bool {
		if d < n && (left <= 0 || e.stop.Load()) {
			*bs = bulkState{on: true, fn: fnIdx, pc: pc, done: d, acc: acc}
			return true
		}
		return false
	}
	op := ins.Op()
	switch op {
	case BFINDR:
		bo, co := h.get(r.ref(ins.B()), KindBytes), h.get(r.ref(ins.C()), KindBytes)
		if bo == nil || co == nil {
			e.badPair(r.ref(ins.B()), bo == nil, r.ref(ins.C()), KindBytes)
			return left, opTrap
		}
		hay, needle := bytesView(bo.bytes()), bytesView(co.bytes())
		from, to := r.i(ins.D0()), r.i(ins.D1())
		if !e.inRange(op, from, to, len(hay)) {
			return left, opTrap
		}
		res, l, pre := e.find(hay, needle, from, to, done, fs, pc, left)
		if pre {
			return l, opPreempt
		}
		left = l
		r.setI(ins.A(), res)
	case BCMP, BCASECMP:
		bo, co := h.get(r.ref(ins.B()), KindBytes), h.get(r.ref(ins.D1()), KindBytes)
		if bo == nil || co == nil {
			e.badPair(r.ref(ins.B()), bo == nil, r.ref(ins.D1()), KindBytes)
			return left, opTrap
		}
		hay, needle := bytesView(bo.bytes()), bytesView(co.bytes())
		off, to := r.i(ins.C()), r.i(ins.D0())
		if !e.inRange(op, off, to, len(hay)) {
			return left, opTrap
		}
		n := min(int64(len(needle)), to-off) // bytes compared
		a, b := hay[off:off+n], needle[:n]
		res := int64(0)
		for done < n {
			k := min(n-done, bulkChunk)
			if op == BCMP {
				res = int64(strings.Compare(a[done:done+k], b[done:done+k]))
			} else {
				res = caseCompare(a[done:done+k], b[done:done+k])
			}
			done += k
			left -= charge(k)
			if res != 0 {
				break
			}
			if spent(done, n, 0) {
				return left, opPreempt
			}
		}
		if res == 0 && n < int64(len(needle)) {
			res = -1 // the range ends inside the needle: it is a proper prefix
		}
		r.setI(ins.A(), res)
	case BTOI, STOI:
		var s string
		if op == BTOI {
			o := h.get(r.ref(ins.B()), KindBytes)
			if o == nil {
				e.badHandle(r.ref(ins.B()), KindBytes)
				return left, opTrap
			}
			s = bytesView(o.bytes())
		} else {
			o := h.get(r.ref(ins.B()), KindString)
			if o == nil {
				e.badHandle(r.ref(ins.B()), KindString)
				return left, opTrap
			}
			s = o.str()
		}
		from, to := r.i(ins.C()), r.i(ins.D0())
		if !e.inRange(op, from, to, len(s)) {
			return left, opTrap
		}
		s = s[from:to]
		n := int64(len(s))
		neg := n > 0 && s[0] == '-'
		first := int64(0) // the first digit
		if n > 0 && (s[0] == '-' || s[0] == '+') {
			first = 1
		}
		limit := uint64(math.MaxInt64) // the largest magnitude
		if neg {
			limit++
		}
		i := max(done, first)
		for {
			end := min(i+bulkChunk, n)
			j := i
			if acc == 0 { // leading zeros leave it 0: skip them in blocks
				j += int64(zeroRun(s[i:end]))
			}
			for ; j < end && s[j] >= '0' && s[j] <= '9'; j++ {
				d := uint64(s[j] - '0')
				if acc > (limit-d)/10 {
					left -= charge(j + 1 - done)
					r.setI(ins.A(), 0)
					r.setI(ins.D1(), -1)
					return left, opOK
				}
				acc = acc*10 + d
			}
			left -= charge(j - done)
			done = j
			if j < end || j == n {
				break // a non-digit, or the end of the range
			}
			if spent(done, n, acc) {
				return left, opPreempt
			}
			i = j
		}
		v, endOff := int64(acc), from+done
		if neg {
			v = int64(-acc) // wraps to MinInt64 for a magnitude of 2^63
		}
		if done == first {
			v, endOff = 0, from // no digits (a sign alone is no number)
		}
		r.setI(ins.A(), v)
		r.setI(ins.D1(), endOff)
	case ITOB:
		o := h.get(r.ref(ins.B()), KindBytes)
		if o == nil {
			e.badHandle(r.ref(ins.B()), KindBytes)
			return left, opTrap
		}
		var tmp [20]byte
		digits := strconv.AppendInt(tmp[:0], r.i(ins.D0()), 10)
		buf, off := o.bytes(), r.i(ins.C())
		if off < 0 || off > int64(len(buf)-len(digits)) {
			e.x().trap = TrapInfo{Code: TrapBounds, Msg: fmt.Sprintf("itob: %d bytes at offset %d do not fit in length %d", len(digits), off, len(buf))}
			return left, opTrap
		}
		r.setI(ins.A(), off+int64(copy(buf[off:], digits)))
	}
	return left, opOK
}

// inRange checks the range [from, to) of an operand of length n, recording
// a TrapBounds when it is not 0 <= from <= to <= n.
func (e *Exec) inRange(op Op, from, to int64, n int) bool {
	if from < 0 || from > to || to > int64(n) {
		e.x().trap = TrapInfo{Code: TrapBounds, Msg: fmt.Sprintf("%s: range [%d:%d] outside length %d", op, from, to, n)}
		return false
	}
	return true
}

// caseCompare compares a and b (of equal length) with ASCII letters
// folded to lower case: -1, 0 or 1. Blocks of 8 bytes are compared folded
// at once (lower8); the first that differs is looked at byte by byte.
func caseCompare(a, b string) int64 {
	i := 0
	ab := unsafe.Slice(unsafe.StringData(a), len(a)) // read only
	bb := unsafe.Slice(unsafe.StringData(b), len(b))
	for ; i+64 <= len(a); i += 64 {
		if a[i:i+64] != b[i:i+64] && !caseEqual64(ab[i:i+64], bb[i:i+64]) {
			break
		}
	}
	for ; i+8 <= len(a); i += 8 {
		if x, y := binary.LittleEndian.Uint64(ab[i:]), binary.LittleEndian.Uint64(bb[i:]); x != y && lower8(x) != lower8(y) {
			break
		}
	}
	for ; i < len(a); i++ {
		x, y := lowerASCII(a[i]), lowerASCII(b[i])
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// caseEqual64 reports whether 64 bytes of a and b are equal folded.
func caseEqual64(a, b []byte) bool {
	a, b = a[:64], b[:64]
	var d uint64
	for i := 0; i < 64; i += 8 {
		d |= lower8(binary.LittleEndian.Uint64(a[i:])) ^ lower8(binary.LittleEndian.Uint64(b[i:]))
	}
	return d == 0
}

// lower8 is lowerASCII of each byte of x: a byte below 0x80 in 'A'..'Z'
// gets bit 5 (no sum carries into the next byte: each is at most 0xbe).
func lower8(x uint64) uint64 {
	const ones = 0x0101010101010101
	h := x & (0x7f * ones)
	ge := h + (0x80-'A')*ones   // bit 7: h >= 'A'
	gt := h + (0x80-'Z'-1)*ones // bit 7: h > 'Z'
	return x | (ge&^gt&^x&(0x80*ones))>>2
}

// zeros64 is 64 ASCII zeros.
var zeros64 = strings.Repeat("0", 64)

// zeroRun returns the number of leading '0' bytes of s.
func zeroRun(s string) int {
	i := 0
	for i+64 <= len(s) && s[i:i+64] == zeros64 {
		i += 64
	}
	for i < len(s) && s[i] == '0' {
		i++
	}
	return i
}

// lowerASCII maps 'A'..'Z' to 'a'..'z' and every other byte to itself.
func lowerASCII(c byte) byte {
	if c-'A' < 26 {
		return c + 'a' - 'A'
	}
	return c
}
