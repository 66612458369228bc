package vmloop

import (
	"fmt"
	"github.com/jadevm/jade/internal/vmhook"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// The hook for a native (C) twin of the interpreter loop (package native).
//
// vmloop stays pure Go: it knows nothing of cgo. A package that has a
// native loop registers it with vmhook.SetLoop; from then on Run hands every
// slice of a task to it (unless the task opted out with SetNative(false),
// and never in the jadecheck build, whose register type tags the native
// loop does not keep). The native loop runs the hot subset of the ISA on
// the task's own register stack and frame stack and returns either
// vmhook.Preempted (a safe point with the budget spent or Stop called; the
// state is saved exactly as the Go loop saves it) or vmhook.Exit: the
// instruction at frames[fp].pc is one it does not run (or a trap condition
// of one it does), not yet charged. Run then charges that instruction and
// executes it out of line with the Go loop's own step, which holds all of
// the semantics of everything outside the hot subset (traps, handles,
// allocation, throws, intrinsics, growth of the stacks), and calls the
// native loop again. So the native loop duplicates no semantics beyond the
// hot subset, and the reduction count, safe points and trap pcs are those
// of the Go loop.
//
// Memory sharing (cgo pointer rules): the register stack ([]uint64), the
// frame stack ([]frame, three ints each) and the prepared program tables
// (vmhook.Program, []uint64 and []int64) hold no Go pointers, so their
// first-element pointers may be passed to C as call arguments; C keeps no
// copy of them after the call. The stop flag is passed as a pointer to the
// uint32 inside the atomic.Bool. The table of byte buffers (vmhook.Bufs) is
// an allocation of its own that holds only pinned Go pointers.

// nativeBufCache is a vmhook.Bufs with its pinner, reused through a pool
// (no allocation per Run). The table is an allocation of its own: the cgo
// check of the pointer passed to C covers the whole allocation, which must
// hold no unpinned Go pointer (the pinner's is one).
type nativeBufCache struct {
	t    *vmhook.Bufs
	next int // slot to replace when the table is full
	pin  runtime.Pinner
}

var nativeBufPool = sync.Pool{New: func() any { return &nativeBufCache{t: new(vmhook.Bufs)} }}

// has reports whether handle h is in the table.
func (c *nativeBufCache) has(h uint64) bool {
	for i := int64(0); i < c.t.N; i++ {
		if c.t.B[i].H == h {
			return true
		}
	}
	return false
}

// add puts buffer b, named by handle h, in the table.
func (c *nativeBufCache) add(h uint64, b []byte) {
	i := int(c.t.N)
	if i == vmhook.BufSlots {
		i = c.next
		c.next = (c.next + 1) % vmhook.BufSlots
	} else {
		c.t.N++
	}
	var p unsafe.Pointer
	if len(b) > 0 {
		p = unsafe.Pointer(unsafe.SliceData(b))
		c.pin.Pin(p)
	}
	c.t.B[i] = vmhook.Buf{H: h, P: p, N: int64(len(b))}
}

// release empties the table, unpins the buffers and returns c to the pool.
func (c *nativeBufCache) release() {
	*c.t = vmhook.Bufs{}
	c.next = 0
	c.pin.Unpin()
	nativeBufPool.Put(c)
}

// nativeMode says which loop Run uses.
type nativeMode uint8

const (
	// nativeAuto (the default): the registered native loop, except for a
	// task whose entry frame runs a straight function (no call, no
	// backward branch: at most len(Code) instructions in all), which is
	// cheaper in the Go loop than a cgo crossing.
	nativeAuto nativeMode = iota
	nativeOff             // SetNative(false): always the Go loop
	nativeOn              // SetNative(true): the native loop whenever registered
)

// SetNative selects the loop of this task: on uses the registered native
// loop if there is one, for every Run; off always uses the Go loop. By
// default a task uses the native loop unless its whole code is one
// straight function. It may be changed between Runs; both loops share the
// task's state.
func (e *Exec) SetNative(on bool) {
	if on {
		e.native = nativeOn
	} else {
		e.native = nativeOff
	}
}

// wantNative reports whether the loop mode lets Run use the native loop.
func (e *Exec) wantNative() bool {
	switch e.native {
	case nativeOn:
		return true
	case nativeOff:
		return false
	}
	if e.prog == nil || len(e.frames) == 0 {
		return true // freed or recycled: nothing runs (Run reports the state)
	}
	return e.fp > 0 || !e.prog.Funcs[e.frames[0].fn].straight
}

// NativeUsed reports whether the next Run of e uses the native loop.
func (e *Exec) NativeUsed() bool {
	return !jadecheck && e.wantNative() && vmhook.LoopSet()
}

// nativeProgram returns p flattened for a native loop, made on first use.
// p must be verified (the native loop trusts the verifier like the Go
// loop).
func (p *Program) nativeProgram() *vmhook.Program {
	if np := (*vmhook.Program)(atomic.LoadPointer(&p.native)); np != nil {
		return np
	}
	np := &vmhook.Program{}
	n := 0
	for i := range p.Funcs {
		n += len(p.Funcs[i].Code)
	}
	np.Words = make([]uint64, 0, n+len(p.KInt)+len(p.KFlt)+1)
	np.Funcs = make([]int64, 0, vmhook.FuncWords*len(p.Funcs))
	for i := range p.Funcs {
		f := &p.Funcs[i]
		np.Funcs = append(np.Funcs, int64(len(np.Words)), int64(f.NRegs), int64(len(f.Params)))
		for _, ins := range f.Code {
			np.Words = append(np.Words, uint64(ins))
		}
	}
	np.KIntOff = len(np.Words)
	for _, k := range p.KInt {
		np.Words = append(np.Words, uint64(k))
	}
	np.KFltOff = len(np.Words)
	for _, k := range p.KFlt {
		np.Words = append(np.Words, math.Float64bits(k))
	}
	np.Words = append(np.Words, 0)
	atomic.StorePointer(&p.native, unsafe.Pointer(np))
	return np
}

// nativeBufArgs returns the handles of the byte buffers that the native
// loop needs in its table (vmhook.Bufs) to run ins, an instruction it
// exited on, with r the current frame's registers: n is 0 for an
// instruction that names none.
func nativeBufArgs(ins Instr, r []uint64) (hs [2]uint64, n int) {
	switch ins.Op() {
	case BLEN, BGET, BTOI, ITOB:
		return [2]uint64{r[ins.B()]}, 1
	case BSET:
		return [2]uint64{r[ins.A()]}, 1
	case BFINDR:
		return [2]uint64{r[ins.B()], r[ins.C()]}, 2
	case BCMP, BCASECMP:
		return [2]uint64{r[ins.B()], r[ins.D1()]}, 2
	}
	return hs, 0
}

// runNative is Run with the native loop (the state is stReady). It follows
// the Go loop's slow path exactly: an exited instruction is charged, run
// by step, and a safe point preempts when the budget is spent. done is
// false when the rest of the slice is handed to the Go loop (see
// vmhook.SetFallback) with left budget; the instruction at frames[fp].pc
// is then not yet run nor charged, and the reductions so far are counted.
func (e *Exec) runNative(loop vmhook.Loop, budget int64) (sig Signal, left int64, done bool) {
	np := e.prog.nativeProgram()
	fallback := vmhook.Fallback()
	left = budget
	var bufs *nativeBufCache // the buffers of BLEN BGET BSET, taken on first use
	for {
		var bp unsafe.Pointer
		if bufs != nil {
			bp = unsafe.Pointer(bufs.t)
		}
		res := loop(vmhook.Call{
			Regs:      unsafe.Pointer(unsafe.SliceData(e.regs)),
			NRegs:     len(e.regs),
			Frames:    unsafe.Pointer(unsafe.SliceData(e.frames)),
			NFrames:   len(e.frames),
			FP:        e.fp,
			MaxFrames: int(e.maxFrames),
			Left:      left,
			Stop:      unsafe.Pointer(&e.stop),
			Prog:      np,
			Bufs:      bp,
		})
		ran := left - res.Left
		e.fp, left = res.FP, res.Left
		if res.Exit == vmhook.Preempted {
			e.nativeBackoff = 0
			e.left = left
			e.reductions += uint64(budget - left)
			if bufs != nil {
				bufs.release()
			}
			return SigPreempted, left, true
		}
		if res.Exit != vmhook.Exit {
			panic(fmt.Sprintf("vmloop: native loop returned exit code %d", res.Exit))
		}
		cur := &e.frames[e.fp]
		ins := e.prog.Funcs[cur.fn].Code[cur.pc]
		if ins.Op() == TAILCALL {
			// The native loop exits on a TAILCALL only when the new
			// function's frame does not fit the register stack: grow
			// it (as the Go loop does inline) and run it natively.
			need := cur.base + headroom(e.prog.Funcs[ins.D()].NRegs)
			if need <= len(e.regs) {
				panic("vmloop: native loop exited on a TAILCALL that fits")
			}
			e.growRegs(need, true)
			continue
		}
		if hs, n := nativeBufArgs(ins, e.regs[cur.base:]); n > 0 {
			// A buffer the native loop does not have yet: give it (see
			// vmhook.Bufs) and run the instruction natively. Handles
			// already given (an index out of range, work the native
			// loop leaves to Go) or bad ones run in Go below, which
			// traps or chunks.
			added := false
			for _, h := range hs[:n] {
				if bufs == nil || !bufs.has(h) {
					if o := e.heap.get(h, KindBytes); o != nil {
						if bufs == nil {
							bufs = nativeBufPool.Get().(*nativeBufCache)
						}
						bufs.add(h, o.bytes())
						added = true
					}
				}
			}
			if added {
				continue
			}
		}
		if op := ins.Op(); ran < fallback && (op > TAILCALL || op == LDS) {
			// A short region: let the Go loop run it, and try C again
			// only after a growing number of Runs (up to 64).
			e.nativeBackoff = min(e.nativeBackoff*2+1, 63)
			e.nativeSkip = e.nativeBackoff
			e.reductions += uint64(budget - left)
			if bufs != nil {
				bufs.release()
			}
			return 0, left, false
		}
		if ran >= fallback {
			e.nativeBackoff = 0
		}
		// The instruction may free or replace a buffer, and no pin is
		// held while Go runs one (a panic then leaks none).
		if bufs != nil {
			bufs.release()
			bufs = nil
		}
		cur.pc++
		e.left = left - 1
		c := e.step(ins)
		if c >= ctlExit {
			e.reductions += uint64(budget - e.left)
			if bufs != nil {
				bufs.release()
			}
			return Signal(c - ctlExit), e.left, true
		}
		left = e.left
		if c == ctlSafePoint && (left <= 0 || e.stop.Load()) {
			e.reductions += uint64(budget - left)
			if bufs != nil {
				bufs.release()
			}
			return SigPreempted, left, true
		}
	}
}

// The jadecheck build keeps register type tags only the Go loop keeps: no
// native loop may run there (native.Available reads it).
func init() { vmhook.Unsupported = jadecheck }
