//go:build !jadecheck

package vmloop

import "math"

// The fast register accessors. The verifier proves every register operand
// is below the frame's NRegs and every read sees a value of the right type,
// so the loop indexes a *[MaxRegs]uint64 with the 8-bit operand and needs
// neither bounds checks nor type tags. Build with -tags jadecheck for the
// checked variant (interp_check.go), which fuzzers use to catch an unsound
// verifier.

// jadecheck reports whether this is the checked build.
const jadecheck = false

// regs is the register frame of the running function.
type regs struct{ p *[MaxRegs]uint64 }

// shadow holds the jadecheck register tags; empty in the fast build.
type shadow struct{}

// view returns the frame of nregs registers at base. The register stack
// keeps MaxRegs slots above every frame base, so the conversion never fails.
func (e *Exec) view(base, nregs int) regs {
	return regs{(*[MaxRegs]uint64)(e.regs[base : base+MaxRegs])}
}

func (r regs) i(x uint8) int64                 { return int64(r.p[x]) }
func (r regs) f(x uint8) float64               { return math.Float64frombits(r.p[x]) }
func (r regs) ref(x uint8) uint64              { return r.p[x] }
func (r regs) setI(x uint8, v int64)           { r.p[x] = uint64(v) }
func (r regs) setF(x uint8, v float64)         { r.p[x] = math.Float64bits(v) }
func (r regs) setRef(x uint8, v uint64)        { r.p[x] = v }
func (r regs) get(x uint8, t Type) uint64      { return r.p[x] }
func (r regs) set(x uint8, v uint64, t Type)   { r.p[x] = v }
func (r regs) move(dst, src uint8)             { r.p[dst] = r.p[src] }
func (r regs) enter(nparams int)               {}
func (r regs) clobber(from int)                {}
func (e *Exec) growShadow(n int)               {}
func (e *Exec) freeShadow()                    {}
func (e *Exec) getAbs(i int, t Type) uint64    { return e.regs[i] }
func (e *Exec) setAbs(i int, v uint64, t Type) { e.regs[i] = v }
func (e *Exec) clobberAbs(from, to int)        {}
