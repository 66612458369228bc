package vmloop

import (
	"fmt"
	"math/bits"
	"slices"
)

// This file holds the control-flow side of the verifier: the register-type
// lattice, basic blocks, the .try handler table and the safe-point bound.
//
// Register-type lattice. The verifier tracks, per register and program
// point, the set of kinds the register may hold on some path reaching that
// point. A read of type T is allowed only when that set is exactly {T}; a
// write replaces the set by {T}; a merge of two paths is the union. The set
// only grows during the fixpoint iteration, so the iteration terminates, and
// a read rejected on a partial state is also rejected on the final one.
// "Conflict" (docs/ISA.md, "Types and registers") is any set with more than one kind.
//
// A ref is one of three kinds: vkStr and vkBytes where the instruction that
// wrote it makes a string or a byte buffer, vkRef where the verifier cannot
// know the object's kind (a parameter, a call's result, an array element).
// A read of type ref accepts any set of the three; a read that needs a
// string or bytes object is rejected only when the register holds the other
// one on every path (verify_kind.go), and checked at run time otherwise.
const (
	vkUndef = iota // never written on some path
	vkClob         // clobbered by a call (the callee's frame overlapped it)
	vkI64
	vkF64
	vkRef   // a ref of unknown object kind
	vkStr   // a ref to a string
	vkBytes // a ref to a byte buffer
	vkCount
)

var vkNames = [vkCount]string{"unassigned", "clobbered", "i64", "f64", "ref", "string", "bytes"}

// vkRefs is the set of the ref kinds.
const vkRefs = 1<<vkRef | 1<<vkStr | 1<<vkBytes

// vfReads reports whether a register holding the kinds m may be read as
// kind k (vkI64, vkF64 or vkRef): m must be exactly {k}, or for a ref any
// non-empty set of ref kinds.
func vfReads(m uint8, k int) bool {
	if k == vkRef {
		return m != 0 && m&^vkRefs == 0
	}
	return m == 1<<k
}

// vfFoldRefs maps the ref kinds of m to vkRef, for messages about types.
func vfFoldRefs(m uint8) uint8 {
	if m&vkRefs != 0 {
		m = m&^vkRefs | 1<<vkRef
	}
	return m
}

// vkOf maps a value type (TI64, TF64, TRef) to its lattice kind.
func vkOf(t Type) int { return int(t) + 1 }

// vfState is the abstract register file at one program point: bit r of
// kind k's words is set when register r may hold kind k. It is a window of
// vkCount*nw words, nw = words per kind, sized by the frame
// (vfStateWords), so a block's state costs 40 bytes in a frame of up to 63
// registers and every operation is a handful of word operations.
type vfState []uint64

// vfStateWords returns the words per kind for a frame of nregs registers
// (at least one, so that the state is never empty).
func vfStateWords(nregs int) int { return max((nregs+63)/64, 1) }

func (s vfState) nw() int { return len(s) / vkCount }

func (s vfState) set(r uint8, k int) {
	nw := s.nw()
	w, b := int(r>>6), uint64(1)<<(r&63)
	for i := range vkCount {
		s[i*nw+w] &^= b
	}
	s[k*nw+w] |= b
}

// setMask makes register r hold the kinds m (a copy of another register).
func (s vfState) setMask(r uint8, m uint8) {
	nw := s.nw()
	w, b := int(r>>6), uint64(1)<<(r&63)
	for i := range vkCount {
		s[i*nw+w] &^= b
		if m&(1<<i) != 0 {
			s[i*nw+w] |= b
		}
	}
}

// mask returns the kinds register r may hold, as a bit set over vk*.
func (s vfState) mask(r uint8) uint8 {
	nw := s.nw()
	w, sh := int(r>>6), r&63
	var m uint8
	for i := range vkCount {
		m |= uint8((s[i*nw+w]>>sh)&1) << i
	}
	return m
}

// clobberFrom marks every register >= r as clobbered.
func (s vfState) clobberFrom(r int) {
	nw := s.nw()
	for w := range nw {
		lo := w * 64
		var m uint64
		switch {
		case r <= lo:
			m = ^uint64(0)
		case r >= lo+64:
			continue
		default:
			m = ^uint64(0) << uint(r-lo)
		}
		for i := range vkCount {
			s[i*nw+w] &^= m
		}
		s[vkClob*nw+w] |= m
	}
}

// union merges o into s and reports whether s changed.
func (s vfState) union(o vfState) bool {
	var diff uint64
	for i, x := range o[:len(s)] {
		n := s[i] | x
		diff |= n ^ s[i]
		s[i] = n
	}
	return diff != 0
}

// vfBits is a plain bit set over small integers.
type vfBits []uint64

func (b vfBits) set(i int)      { b[i>>6] |= 1 << uint(i&63) }
func (b vfBits) clear(i int)    { b[i>>6] &^= 1 << uint(i&63) }
func (b vfBits) has(i int) bool { return b[i>>6]>>uint(i&63)&1 != 0 }
func (b vfBits) nextFrom(i int) int { // first set bit >= i, or -1
	w := i >> 6
	if w >= len(b) {
		return -1
	}
	x := b[w] &^ (1<<uint(i&63) - 1)
	for {
		if x != 0 {
			return w<<6 + bits.TrailingZeros64(x)
		}
		w++
		if w >= len(b) {
			return -1
		}
		x = b[w]
	}
}

// vfEndsBlock reports whether an instruction with flags f ends a basic
// block: branches, jumps, terminators and safe points do
// (docs/ISA.md, "Safe points, reductions and preemption").
func vfEndsBlock(f Flags) bool {
	return f&(FlagBranch|FlagJump|FlagTerminator|FlagSafePoint) != 0
}

// vfEndsRegion reports whether an instruction with flags f ends a dataflow
// region. Regions are the blocks without the splits at safe points and .try
// starts, which do not change how types flow: fewer states to keep.
func vfEndsRegion(f Flags) bool {
	return f&(FlagBranch|FlagJump|FlagTerminator) != 0
}

// vfIsSafePoint reports whether the instruction ins at pc is a safe point:
// its opcode is one, or it is a branch whose target is at or before it (a
// backward branch checks the budget when taken).
func vfIsSafePoint(ins Instr, f Flags, pc int) bool {
	return f&FlagSafePoint != 0 || f&FlagBranch != 0 && int(ins.D()) <= pc
}

// vfLeaders returns the leaders of the basic blocks and of the dataflow
// regions of a function whose operands were already checked, in the arrays
// of blockBuf and regionBuf when they are large enough (vfReuse).
func vfLeaders(f *Function, blockBuf, regionBuf vfBits) (block, region vfBits) {
	n := len(f.Code)
	block, region = vfReuse(blockBuf, (n+64)/64), vfReuse(regionBuf, (n+64)/64)
	block.set(0)
	region.set(0)
	for pc, ins := range f.Code {
		info, _ := ins.Op().Info()
		if info.Flags&FlagBranch != 0 {
			block.set(int(ins.D()))
			region.set(int(ins.D()))
		}
		if vfEndsBlock(info.Flags) {
			block.set(pc + 1)
		}
		if vfEndsRegion(info.Flags) {
			region.set(pc + 1)
		}
	}
	for _, h := range f.Handlers {
		block.set(int(h.Start))
		block.set(int(h.Target))
		region.set(int(h.Target))
	}
	return block, region
}

// vfCount returns the number of set bits below n.
func vfCount(b vfBits, n int) int {
	c := 0
	for i, w := range b {
		if lo := i * 64; lo+64 > n {
			if n > lo {
				c += bits.OnesCount64(w & (1<<uint(n-lo) - 1))
			}
			break
		}
		c += bits.OnesCount64(w)
	}
	return c
}

// buildBlocks returns the basic blocks of f with their cost and safe-point
// flag, given the block leaders.
func buildBlocks(f *Function, lead vfBits) []Block {
	n := len(f.Code)
	blocks := make([]Block, 0, vfCount(lead, n))
	for start := 0; start < n; {
		end := lead.nextFrom(start + 1)
		if end < 0 || end > n {
			end = n
		}
		last := end - 1
		info, _ := f.Code[last].Op().Info()
		blocks = append(blocks, Block{
			Start:     start,
			End:       end,
			Cost:      end - start,
			SafePoint: vfIsSafePoint(f.Code[last], info.Flags, last),
		})
		start = end
	}
	return blocks
}

// checkHandlers validates the .try table of function fi and returns, for
// every pc, the index of the handler that catches an exception raised there
// (the first covering entry, -1 for none), or nil when there are no
// handlers. Cost: O(len(Code) + H log H).
func (v *verifier) checkHandlers(fi int) ([]int32, error) {
	f := &v.p.Funcs[fi]
	hs := f.Handlers
	if len(hs) == 0 {
		return nil, nil
	}
	n := len(f.Code)
	for i, h := range hs {
		start, end, target := int64(h.Start), int64(h.End), int64(h.Target)
		switch {
		case start >= end:
			return nil, v.funcErr(fi, -1, "handler %d [%d,%d): empty range (start must be below end)", i, start, end)
		case end > int64(n):
			return nil, v.funcErr(fi, -1, "handler %d [%d,%d) ends past the function (len %d)", i, start, end, n)
		case target >= int64(n):
			return nil, v.funcErr(fi, -1, "handler %d target %d outside function (len %d)", i, target, n)
		case target >= start && target < end:
			return nil, v.funcErr(fi, -1, "handler %d target %d lies inside its own range [%d,%d); a handler must lie outside the code it protects", i, target, start, end)
		case int(h.Reg) >= f.NRegs:
			return nil, v.funcErr(fi, -1, "handler %d error register r%d outside the frame of %d registers %s", i, h.Reg, f.NRegs, vfRegRange(f.NRegs))
		}
	}

	// Nesting and order. Sorted by (Start asc, End desc, index asc) an
	// enclosing range comes before the ranges inside it, so one stack sweep
	// sees every range together with the chain of ranges that contain it.
	// Ranges that are equal form one group: the first listed wins and the
	// others are never used, which is harmless.
	order := make([]int32, len(hs))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(x, y int32) int {
		a, b := hs[x], hs[y]
		switch {
		case a.Start != b.Start:
			return vfCmp(a.Start, b.Start)
		case a.End != b.End:
			return vfCmp(b.End, a.End)
		}
		return int(x) - int(y)
	})
	type group struct {
		start, end uint32
		chainMin   int32 // smallest index in this group and the groups around it
	}
	var stack []group
	for _, i := range order {
		h := hs[i]
		for len(stack) > 0 && stack[len(stack)-1].end <= h.Start {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			stack = append(stack, group{h.Start, h.End, i})
			continue
		}
		top := &stack[len(stack)-1]
		if h.End > top.end {
			j := v.firstHandler(fi, top.start, top.end)
			return nil, v.funcErr(fi, -1, "handlers %d [%d,%d) and %d [%d,%d) overlap partially; .try ranges must be disjoint or nested", j, top.start, top.end, i, h.Start, h.End)
		}
		if h.Start == top.start && h.End == top.end {
			if len(stack) > 1 {
				if outer := stack[len(stack)-2].chainMin; i > outer {
					return nil, v.nestErr(fi, int(i), int(outer))
				}
			}
			top.chainMin = min(top.chainMin, i)
			continue
		}
		if i > top.chainMin {
			return nil, v.nestErr(fi, int(i), int(top.chainMin))
		}
		stack = append(stack, group{h.Start, h.End, min(i, top.chainMin)})
	}

	// Paint the innermost (first listed) covering handler onto every pc.
	at := make([]int32, n)
	type open struct {
		idx int32
		end uint32
	}
	var st []open
	k := 0
	for pc := range n {
		for len(st) > 0 && int(st[len(st)-1].end) <= pc {
			st = st[:len(st)-1]
		}
		for k < len(order) && int(hs[order[k]].Start) == pc {
			i := order[k]
			k++
			if len(st) > 0 {
				t := hs[st[len(st)-1].idx]
				if t.Start == hs[i].Start && t.End == hs[i].End {
					continue // equal range listed later: never used
				}
			}
			st = append(st, open{i, hs[i].End})
		}
		if len(st) > 0 {
			at[pc] = st[len(st)-1].idx
		} else {
			at[pc] = -1
		}
	}
	return at, nil
}

func vfCmp(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// firstHandler returns the lowest index of a handler with the given range.
func (v *verifier) firstHandler(fi int, start, end uint32) int {
	for j, h := range v.p.Funcs[fi].Handlers {
		if h.Start == start && h.End == end {
			return j
		}
	}
	return -1
}

func (v *verifier) nestErr(fi, inner, outer int) error {
	hs := v.p.Funcs[fi].Handlers
	return v.funcErr(fi, -1, "handler %d [%d,%d) lies inside handler %d [%d,%d) but is listed after it, so it would never catch anything; list inner .try ranges before the ranges around them",
		inner, hs[inner].Start, hs[inner].End, outer, hs[outer].Start, hs[outer].End)
}

// vfRegRange describes the valid registers of a frame of n registers.
func vfRegRange(n int) string {
	if n <= 0 {
		return "(the function has no registers)"
	}
	return fmt.Sprintf("(r0..r%d)", n-1)
}

// MaxSafePointFreeCost returns the largest static cost (number of
// instructions, counting the safe point that ends the stretch) that the
// function can execute between two budget checks, following fall-through
// and forward branches. Bulk operations add their size-dependent part at
// run time on top of this. Every cycle passes a safe point (backward
// branches, calls and throws are safe points), so the bound is finite; for a
// function Verify has not accepted the result is still computed but means
// little. O(len(Code)).
func (f *Function) MaxSafePointFreeCost() int {
	n := len(f.Code)
	dist := make([]int, n+1) // instructions run since the last check, on entry to pc
	best := 0
	for pc, ins := range f.Code {
		c := dist[pc] + 1
		best = max(best, c)
		info, ok := ins.Op().Info()
		if !ok || info.Flags&FlagSafePoint != 0 {
			continue // the budget is checked here; successors start at 0
		}
		if info.Flags&FlagBranch != 0 {
			if d := int(ins.D()); d > pc && d < n {
				dist[d] = max(dist[d], c)
			}
		}
		if info.Flags&(FlagJump|FlagTerminator) == 0 {
			dist[pc+1] = max(dist[pc+1], c)
		}
	}
	return best
}
