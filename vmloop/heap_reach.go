package vmloop

import "math"

// The cycle check of ASETR: a walk over the ref arrays reachable from one,
// kept on the heap's DFS stack so that it runs in chunks (interp_long.go).

// reaches reports whether the ref array from (a live KindArrayRef object
// index) contains, directly or through nested ref arrays, the object with
// index target. n is the number of array elements visited. It is the cycle
// check of ASETR (which runs it in chunks: reachStart, reachMore): storing
// a into an array reachable from a would make the heap cyclic, and export
// could not copy it.
func (h *heap) reaches(from, target int32) (found bool, n int) {
	h.reachStart(from)
	for {
		f, fin, k := h.reachMore(target, math.MaxInt)
		n += k
		if f || fin {
			return f, n
		}
	}
}

// reachStart begins the walk of reaches from the ref array from.
func (h *heap) reachStart(from int32) {
	sd := h.sidePart()
	sd.epoch++
	if sd.epoch == 0 { // wrapped: clear every mark
		h.eachSlot(func(o *object) { o.mark = 0 })
		sd.epoch = 1
	}
	sd.stack = append(sd.stack[:0], from)
	sd.cur, sd.off = 0, 0
	h.slot(int(from)).mark = sd.epoch
}

// reachMore continues the walk begun by reachStart until it finds target
// (found), has visited everything reachable (finished) or has visited most
// elements (neither; call it again to go on), even inside one array. n is
// the number of elements it visited. The walk's state is the DFS stack,
// the array being scanned and the marks of the current epoch, so the heap
// must not change between two calls.
func (h *heap) reachMore(target int32, most int) (found, finished bool, n int) {
	sd := h.sidePart()
	st := sd.stack
	cur, off := sd.cur, sd.off
	for n < most {
		if cur == 0 {
			if len(st) == 0 {
				break
			}
			cur, off = st[len(st)-1], 0
			st = st[:len(st)-1]
			if cur == target {
				sd.stack, sd.cur = st[:0], 0
				return true, true, n
			}
		}
		a := h.slot(int(cur)).arr()
		end := len(a)
		if rest := most - n; rest < end-off {
			end = off + rest
		}
		for _, x := range a[off:end] {
			o := h.get(x, KindArrayRef)
			if o == nil || o.mark == sd.epoch {
				continue
			}
			o.mark = sd.epoch
			st = append(st, int32(x&handleIdxMask))
		}
		n += end - off
		if off = end; off == len(a) {
			cur = 0
		}
	}
	sd.stack, sd.cur, sd.off = st, cur, off
	return false, cur == 0 && len(st) == 0, n
}
