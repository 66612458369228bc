//go:build !jadecheck

package vmloop

import (
	"math"
	"unsafe"
)

// The fast register accessors. The verifier proves every register operand
// is below the frame's NRegs and every read sees a value of the right type,
// so the loop reads and writes base+x by pointer arithmetic, with neither
// bounds checks nor type tags, and the register stack only needs NRegs
// slots above the current base (a parked task keeps no 2 KiB window). Build with -tags jadecheck for the
// checked variant (interp_check.go), which fuzzers use to catch an unsound
// verifier.

// jadecheck reports whether this is the checked build.
const jadecheck = false

// regs is the register frame of the running function: a pointer to its
// register 0.
type regs struct{ p unsafe.Pointer }

// shadow holds the jadecheck register tags; empty in the fast build.
//
//lint:ignore U1000 the fast build's empty twin of interp_check.go's shadow
type shadow struct{}

// view returns the frame of nregs registers at base. The register stack
// holds at least base+nregs slots (headroom), and the verifier proves every
// operand is below nregs.
func (e *Exec) view(base, nregs int) regs {
	return regs{unsafe.Pointer(unsafe.SliceData(e.regs[base : base+nregs]))}
}

// headroom is the number of register slots a frame of nregs needs above
// its base.
func headroom(nregs int) int { return nregs }

func (r regs) at(x uint8) *uint64 { return (*uint64)(unsafe.Add(r.p, uintptr(x)*8)) }

func (r regs) i(x uint8) int64               { return int64(*r.at(x)) }
func (r regs) f(x uint8) float64             { return math.Float64frombits(*r.at(x)) }
func (r regs) ref(x uint8) uint64            { return *r.at(x) }
func (r regs) setI(x uint8, v int64)         { *r.at(x) = uint64(v) }
func (r regs) setF(x uint8, v float64)       { *r.at(x) = math.Float64bits(v) }
func (r regs) setRef(x uint8, v uint64)      { *r.at(x) = v }
func (r regs) get(x uint8, t Type) uint64    { return *r.at(x) }
func (r regs) set(x uint8, v uint64, t Type) { *r.at(x) = v }
func (r regs) move(dst, src uint8)           { *r.at(dst) = *r.at(src) }
func (r regs) enter(nparams int)             {}

//lint:ignore U1000 the fast build's no-op twin of the jadecheck accessor
func (r regs) clobber(from int)                {}
func (e *Exec) growShadow(n int)               {}
func (e *Exec) freeShadow()                    {}
func (e *Exec) getAbs(i int, t Type) uint64    { return e.regs[i] }
func (e *Exec) setAbs(i int, v uint64, t Type) { e.regs[i] = v }
func (e *Exec) clobberAbs(from, to int)        {}

// curRef reads ref register x of the current frame without building the
// frame's view (step's event intrinsics: BenchmarkPingPong).
func (e *Exec) curRef(x uint8) uint64 { return e.regs[e.frames[e.fp].base+int(x)] }
