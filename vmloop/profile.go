package vmloop

import (
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Profiling support: the Jade call stack of a task as function indices
// and pcs (the CPU profiler of package jprof samples it at safe points),
// and sampled allocations of task heaps (its heap profile).
//
// Nothing here runs in the interpreter loops. Heap sampling costs one
// atomic load per heap allocation while it is off (heapSampling, on the
// allocation's slow path, never in the instruction dispatch), and a
// released object looks at one flag of its slot.

// MaxProfileFrames is how many frames ProfileStack keeps, innermost first;
// a deeper stack loses its outermost frames.
const MaxProfileFrames = 64

// ProfFrame is one frame of a sampled call stack: the function index in
// the task's program and the pc in that function (for a caller, the pc of
// its call instruction).
type ProfFrame struct {
	Fn, PC int32
}

// ProfileStack appends the task's Jade call stack to dst, innermost first,
// at most MaxProfileFrames frames, and returns it. The innermost frame is
// at the next instruction to run (where Run stopped: after SigPreempted
// the instruction after the safe point), at the requesting instruction
// while an intrinsic request is pending, and at the returning or faulting
// instruction of an ended task; each caller is at its call. It is empty
// after Free. Call it only from the goroutine that runs the task, between
// two Runs.
func (e *Exec) ProfileStack(dst []ProfFrame) []ProfFrame {
	if len(e.frames) == 0 || e.prog == nil {
		return dst
	}
	pc := e.frames[e.fp].pc
	if e.state == stRequest {
		pc = int(e.reqPC)
	}
	return e.appendStack(dst, pc)
}

// appendStack appends the stack with the current frame at pc (clamped to
// the function's code) and every caller at its call.
func (e *Exec) appendStack(dst []ProfFrame, pc int) []ProfFrame {
	for i := e.fp; i >= 0 && len(dst) < MaxProfileFrames; i-- {
		f := e.frames[i]
		at := pc
		if i < e.fp {
			at = f.pc - 1
		}
		if n := len(e.prog.Funcs[f.fn].Code); at >= n {
			at = n - 1
		}
		dst = append(dst, ProfFrame{Fn: int32(f.fn), PC: int32(max(at, 0))})
	}
	return dst
}

// Memory returns the memory budget the task's heap draws from
// (Limits.Memory; nil when none): the scheduler's engine budgets tell a
// sampled allocation's engine by it.
func (e *Exec) Memory() *Budget { return e.heap.mem }

// HeapSampler receives the sampled allocations of every task heap while
// heap sampling is on (StartHeapSampling).
type HeapSampler interface {
	// SampleAlloc is told of a sampled object of size accounted bytes
	// made by e, whose stack (innermost first, the innermost frame at the
	// allocating instruction) it must not keep. It runs on the goroutine
	// running the task, in the middle of an instruction: it must not
	// block or touch e. What it returns is told when the object is freed
	// (nil: nothing).
	SampleAlloc(e *Exec, stack []ProfFrame, size int64) HeapSample
}

// HeapSample is one sampled object, as its HeapSampler recorded it.
type HeapSample interface {
	// Free is called once, when the object is released or its heap freed,
	// even after sampling was stopped; on any goroutine.
	Free()
}

// heapSampling is set while a HeapSampler is installed; heapSampler and
// heapRate are read only then.
var (
	heapSampling atomic.Bool
	heapMu       sync.Mutex // orders Start and Stop
	heapSampler  atomic.Pointer[heapSamplerBox]
)

type heapSamplerBox struct {
	s    HeapSampler
	rate float64 // mean bytes between two samples
}

// StartHeapSampling installs s: from now on every heap samples its
// allocations, one in about rate accounted bytes on average (rate > 0),
// at exponentially distributed intervals as Go's MemProfileRate does, so
// that a sample is not synchronised with an allocation pattern; the
// object that crosses an interval's end is sampled, and the sampler
// scales it by 1/(1-exp(-size/rate)). It fails while another sampler is
// installed.
func StartHeapSampling(s HeapSampler, rate int64) error {
	if s == nil || rate <= 0 {
		return errors.New("vmloop: StartHeapSampling: need a sampler and a rate > 0")
	}
	heapMu.Lock()
	defer heapMu.Unlock()
	if heapSampler.Load() != nil {
		return errors.New("vmloop: StartHeapSampling: a heap sampler is already installed")
	}
	heapSampler.Store(&heapSamplerBox{s: s, rate: float64(rate)})
	heapSampling.Store(true)
	return nil
}

// StopHeapSampling removes the installed sampler, if any. Objects it
// sampled still call their HeapSample's Free when they are freed.
func StopHeapSampling() {
	heapMu.Lock()
	defer heapMu.Unlock()
	heapSampling.Store(false)
	heapSampler.Store(nil)
}

// heapProf is the sampling state of one heap (in its heapSide).
type heapProf struct {
	left    float64              // bytes to allocate before the next sample
	rate    float64              // the rate left was drawn for
	samples map[int32]HeapSample // slot index -> its sample, for sampled live objects
}

// exec returns the Exec whose heap h is. Every heap is the heap field of
// an Exec (the package makes no other), so this stays within that Exec's
// allocation.
func (h *heap) exec() *Exec {
	return (*Exec)(unsafe.Add(unsafe.Pointer(h), -int(unsafe.Offsetof(Exec{}.heap))))
}

// sample counts the allocation of object i (n accounted bytes) against
// the heap's sampling interval and samples it when the interval ends.
func (h *heap) sample(i int, n int64) {
	box := heapSampler.Load()
	if box == nil {
		return
	}
	hp := h.sidePart().prof
	if hp == nil {
		hp = &heapProf{}
		h.side.prof = hp
	}
	if hp.rate != box.rate {
		hp.rate, hp.left = box.rate, rand.ExpFloat64()*box.rate
	}
	if hp.left -= float64(n); hp.left > 0 {
		return
	}
	hp.left = rand.ExpFloat64() * box.rate
	e := h.exec()
	if len(e.frames) == 0 || e.prog == nil {
		return
	}
	var buf [MaxProfileFrames]ProfFrame
	// During an instruction frames[fp].pc is past it; while an argument or
	// result is imported it is past the request, or 0 at a task's start.
	stack := e.appendStack(buf[:0], e.frames[e.fp].pc-1)
	s := box.s.SampleAlloc(e, stack, n)
	if s == nil {
		return
	}
	if hp.samples == nil {
		hp.samples = make(map[int32]HeapSample)
	}
	hp.samples[int32(i)] = s
	h.objs[i-1].sampled = true
}

// sampleFree tells the sample of the released object i that it is gone.
func (h *heap) sampleFree(i int32) {
	if h.side == nil || h.side.prof == nil {
		return
	}
	if s, ok := h.side.prof.samples[i]; ok {
		delete(h.side.prof.samples, i)
		s.Free()
	}
}

// freeSamples tells every sampled live object's sample that it is gone
// (the heap is being freed).
func (h *heap) freeSamples() {
	if h.side == nil || h.side.prof == nil {
		return
	}
	for i, s := range h.side.prof.samples {
		delete(h.side.prof.samples, i)
		s.Free()
	}
}
