package jasm

import "github.com/jadevm/jade/vmloop"

// tryRange is an accepted .try range [start, end) and its source line.
type tryRange struct {
	start, end int
	line       int
}

// handlers resolves the function's .try directives into Handlers, in
// source order. A range must be disjoint from or enclose every range
// accepted before it (the first covering entry wins, so inner ranges come
// first); the cover answers that in near-constant time per range, so a
// function with many ranges assembles in time linear in their number.
func (f *fnState) handlers() []vmloop.Handler {
	if len(f.ast.tries) == 0 {
		return nil
	}
	out := make([]vmloop.Handler, 0, len(f.ast.tries))
	seen := make([]tryRange, 0, len(f.ast.tries))
	c := newCover(len(f.code))
	for _, t := range f.ast.tries {
		s, ok1 := f.label(t.ops[0])
		e, ok2 := f.label(t.ops[1])
		h, ok3 := f.label(t.ops[2])
		r, ok4 := f.reg(t.ops[3], ".try")
		if !ok1 || !ok2 || !ok3 || !ok4 {
			continue
		}
		if r.named && r.typ != vmloop.TRef {
			f.errorf(t.ops[3].pos, ".try: the handler register receives an error handle, so it must be ref; %s is %s", r.name, r.typ)
			continue
		}
		if s >= e {
			f.errorf(t.ops[0].pos, ".try: empty range: label %s must come before label %s", t.ops[0].text, t.ops[1].text)
			continue
		}
		if h >= s && h < e {
			f.errorf(t.ops[2].pos, ".try: handler %s lies inside its own range %s..%s; move it outside", t.ops[2].text, t.ops[0].text, t.ops[1].text)
			continue
		}
		if h >= len(f.code) {
			f.errorf(t.ops[2].pos, ".try: handler %s is at the end of the function; it needs an instruction", t.ops[2].text)
			continue
		}
		if c.conflicts(s, e) {
			if !f.a.d.full() {
				f.tryConflict(t.pos, seen, s, e)
			}
			continue
		}
		c.add(s, e)
		seen = append(seen, tryRange{s, e, t.pos.line})
		out = append(out, vmloop.Handler{Start: uint32(s), End: uint32(e), Target: uint32(h), Reg: uint8(r.idx)})
	}
	return out
}

// tryConflict reports the first accepted range, in listing order, that
// the rejected range [s, e) at p lies inside or overlaps without nesting.
// It scans every accepted range, which is affordable because only the
// first few dozen errors are reported.
func (f *fnState) tryConflict(p pos, seen []tryRange, s, e int) {
	for _, o := range seen {
		switch {
		case e <= o.start || o.end <= s: // disjoint
		case s <= o.start && o.end <= e: // encloses an earlier one: fine
		case o.start <= s && e <= o.end:
			f.errorf(p, ".try: this range lies inside the range listed at line %d; list the inner range first (innermost first)", o.line)
			return
		default:
			f.errorf(p, ".try: this range overlaps the range at line %d without nesting; ranges must be disjoint or nested", o.line)
			return
		}
	}
	// Not reached: the cover found a conflict, so some range has one.
	f.errorf(p, ".try: this range overlaps an earlier range without nesting; ranges must be disjoint or nested")
}

// cover tracks the outermost of the accepted .try ranges of a function.
// Every accepted range is disjoint from or encloses each one accepted
// before it, so the outermost ranges are disjoint, and a new range
// conflicts with some accepted range exactly when it conflicts with an
// outermost one: when the outermost range covering its first pc starts
// before it, or the one covering its last pc ends after it. Accepting a
// range makes it outermost in place of the outermost ranges it encloses.
//
// The pcs form a union-find: a set is either one pc that no range covers
// or the pcs of one outermost range, and its representative holds the
// set's bounds. Union by size with path halving makes each operation
// near-constant amortized.
type cover struct {
	parent  []int
	size    []int
	lo, hi  []int  // per representative: the set's pcs are [lo, hi)
	covered []bool // per representative: the set is an outermost range
	steps   int    // parent links followed and sets merged, for tests
}

func newCover(n int) *cover {
	c := &cover{parent: make([]int, n), size: make([]int, n), lo: make([]int, n), hi: make([]int, n), covered: make([]bool, n)}
	for pc := range n {
		c.parent[pc], c.size[pc], c.lo[pc], c.hi[pc] = pc, 1, pc, pc+1
	}
	return c
}

func (c *cover) find(pc int) int {
	for c.parent[pc] != pc {
		c.steps++
		c.parent[pc] = c.parent[c.parent[pc]]
		pc = c.parent[pc]
	}
	return pc
}

// conflicts reports whether [s, e) (0 <= s < e <= len) lies inside an
// accepted range it does not equal or overlaps one without nesting.
func (c *cover) conflicts(s, e int) bool {
	if r := c.find(s); c.covered[r] && c.lo[r] < s {
		return true
	}
	r := c.find(e - 1)
	return c.covered[r] && c.hi[r] > e
}

// add accepts [s, e), for which conflicts is false: its pcs become one set.
func (c *cover) add(s, e int) {
	r := c.find(s)
	for c.hi[r] < e {
		c.steps++
		q := c.find(c.hi[r])
		hi := c.hi[q]
		if c.size[r] < c.size[q] {
			r, q = q, r
		}
		c.parent[q] = r
		c.size[r] += c.size[q]
		c.lo[r], c.hi[r] = s, hi
	}
	c.lo[r], c.covered[r] = s, true
}
