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
func (e *Exec) Memory() *Budget { return e.heap.budget() }

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
// heapLeft are used only then.
var (
	heapSampling atomic.Bool
	heapMu       sync.Mutex // orders Start and Stop
	heapSampler  atomic.Pointer[heapSamplerBox]
	heapLeft     [heapShards]heapShard
)

// The sampling intervals run on heapShards shared countdowns, one cache
// line each, that heaps use by their owner id: a heap has no room for
// one of its own (the Exec is a size class exactly), a heap state made
// per heap cost a spawn-heavy program (one small heap per task) as much
// as the tasks themselves, and one shared counter would be written by
// every worker at every allocation. Each countdown is a Poisson process
// over the bytes counted on it, so their union samples every byte with
// the same chance.
const heapShards = 64

type heapShard struct {
	left atomic.Int64 // bytes before the next sample
	_    [56]byte
}

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
	for i := range heapLeft {
		heapLeft[i].left.Store(int64(rand.ExpFloat64()*float64(rate)) + 1)
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

// heapProf is what a heap keeps of its sampled objects (in its
// heapSide, made at its first sample).
type heapProf struct {
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
	sh := &heapLeft[h.owner%heapShards]
	left := sh.left.Add(-n)
	if left > 0 || left+n <= 0 {
		// Not the end of the interval, or another allocation ended it
		// and is about to start the next.
		return
	}
	box := heapSampler.Load()
	if box == nil {
		return
	}
	// The next interval starts after this object, as in Go's runtime (an
	// object is sampled once, its weight counts the sample points in it);
	// an allocation counted between the Add and this Store is lost to it.
	sh.left.Store(int64(rand.ExpFloat64()*box.rate) + 1)
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
	hp := h.sidePart().prof
	if hp == nil {
		hp = &heapProf{samples: make(map[int32]HeapSample)}
		h.side.prof = hp
	}
	hp.samples[int32(i)] = s
	h.slot(i).sampled = true
}

// sampleFree tells the sample of the released object i that it is gone.
func (h *heap) sampleFree(i int32) {
	if h.side.prof == nil {
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
		return // (nil: a heap never started)
	}
	for i, s := range h.side.prof.samples {
		delete(h.side.prof.samples, i)
		s.Free()
	}
}
