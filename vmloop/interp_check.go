//go:build jadecheck

package vmloop

import (
	"fmt"
	"math"
)

// The checked register accessors (build tag jadecheck). Every register
// access is bounds-checked against the frame's NRegs, and every register
// carries a shadow type tag (TVoid = undefined) that each typed read
// checks: a register read before it was written, read with the wrong type
// (an integer used as a handle), or outside the frame panics with a
// "vmloop: jadecheck:" message. Calls undefine the callee's non-parameter
// registers and, on return, the caller's registers above the window base,
// exactly as the verifier models them. The fast build (interp_fast.go)
// trusts the verifier for all of this.

// jadecheck reports whether this is the checked build.
const jadecheck = true

// regs is the register frame of the running function.
type regs struct {
	p *[MaxRegs]uint64
	t *[MaxRegs]Type
	n int
}

// shadow holds the register type tags, parallel to Exec.regs.
type shadow struct{ tags []Type }

// headroom is the number of register slots a frame of nregs needs above
// its base; the checked build keeps a full window so views never fail.
func headroom(nregs int) int { return MaxRegs }

func (e *Exec) view(base, nregs int) regs {
	return regs{(*[MaxRegs]uint64)(e.regs[base : base+MaxRegs]), (*[MaxRegs]Type)(e.tags[base : base+MaxRegs]), nregs}
}

func (r regs) chk(x uint8, t Type) {
	if int(x) >= r.n {
		panic(fmt.Sprintf("vmloop: jadecheck: register r%d outside the frame (NRegs %d)", x, r.n))
	}
	if r.t[x] != t {
		panic(fmt.Sprintf("vmloop: jadecheck: register r%d read as %s holds %s", x, t, tagName(r.t[x])))
	}
}

func (r regs) bound(x uint8) {
	if int(x) >= r.n {
		panic(fmt.Sprintf("vmloop: jadecheck: register r%d outside the frame (NRegs %d)", x, r.n))
	}
}

func tagName(t Type) string {
	if t == TVoid {
		return "an undefined value"
	}
	return t.String()
}

func (r regs) i(x uint8) int64          { r.chk(x, TI64); return int64(r.p[x]) }
func (r regs) f(x uint8) float64        { r.chk(x, TF64); return math.Float64frombits(r.p[x]) }
func (r regs) ref(x uint8) uint64       { r.chk(x, TRef); return r.p[x] }
func (r regs) setI(x uint8, v int64)    { r.set(x, uint64(v), TI64) }
func (r regs) setF(x uint8, v float64)  { r.set(x, math.Float64bits(v), TF64) }
func (r regs) setRef(x uint8, v uint64) { r.set(x, v, TRef) }

func (r regs) get(x uint8, t Type) uint64 { r.chk(x, t); return r.p[x] }

func (r regs) set(x uint8, v uint64, t Type) {
	r.bound(x)
	r.p[x], r.t[x] = v, t
}

func (r regs) move(dst, src uint8) {
	r.bound(dst)
	r.bound(src)
	r.p[dst], r.t[dst] = r.p[src], r.t[src]
}

// enter undefines the non-parameter registers of a frame just entered.
func (r regs) enter(nparams int) {
	for i := nparams; i < r.n; i++ {
		r.t[i] = TVoid
	}
}

// clobber undefines registers from..NRegs-1 (after a call returned).
func (r regs) clobber(from int) {
	for i := from; i < r.n; i++ {
		r.t[i] = TVoid
	}
}

func (e *Exec) growShadow(n int) {
	t := make([]Type, n)
	copy(t, e.tags)
	e.tags = t
}

func (e *Exec) freeShadow() { e.tags = nil }

func (e *Exec) getAbs(i int, t Type) uint64 {
	if e.tags[i] != t {
		panic(fmt.Sprintf("vmloop: jadecheck: register stack slot %d read as %s holds %s", i, t, tagName(e.tags[i])))
	}
	return e.regs[i]
}

func (e *Exec) setAbs(i int, v uint64, t Type) { e.regs[i], e.tags[i] = v, t }

func (e *Exec) clobberAbs(from, to int) {
	for i := from; i < to && i < len(e.tags); i++ {
		e.tags[i] = TVoid
	}
}

// curRef reads ref register x of the current frame, type-checked.
func (e *Exec) curRef(x uint8) uint64 {
	cur := &e.frames[e.fp]
	return e.view(cur.base, e.prog.Funcs[cur.fn].NRegs).ref(x)
}
