package sched

import (
	"errors"

	"github.com/jadevm/jade/vmloop"
)

// CPU sampling of Jade code (the bytecode profiler of package jprof).
//
// Design: time-based samples taken at safe points. A profiler goroutine
// calls RequestSamples every period (10 ms by default); for each worker
// that is not parked or in Go's scheduler it records the worker's current
// dispatch count in sampleReq and stops the Exec the worker runs, with the
// same Exec.Stop a cancel or a kick uses. The running loop, Go's or the C
// one, returns SigPreempted at its next safe point (a taken backward
// branch, a call, a return) with its frames written back; the worker
// takes the sample (the task, its Jade stack) and carries on with the
// slice: it clears the stop and goes on unless a cancel or a kick also
// asked it to stop (the store-then-load pairs of doc.go). A slice that
// ends before it reaches a safe point (the task completes, suspends or
// yields) takes the sample where it ends.
//
// Why time-based: the chance that a task is sampled is its share of the
// workers' time, whatever its instructions cost (bulk instructions, the
// cgo loop and the Go loop run at different speeds per reduction, and a
// sample every N reductions would weigh them by reductions, not time).
// The sample lands at the next safe point after the tick: every loop
// iteration and every call has one, so the position is off by at most
// the straight-line code before that point (a leaf function's last block
// is charged to its caller's return site). The 10 ms ticker is not
// synchronised with the tasks' slices or safe points.
// docs/OBSERVABILITY.md shows the bias on an example.
//
// Host intrinsics: a host function runs on the worker between two Runs,
// out of reach of the stop flag. A request pending when the call starts
// is taken there, at the calling instruction (a safe point like any
// other); one made while the call runs is taken when it returns, and
// the call's time goes to the HostSampler as a frame of its own (jprof:
// "intr NAME"), worth the call's duration: without it, a call's time
// would land on the next safe point after it. The cost when off is one
// load of sampleReq before and one after each host call, beside the two
// clock reads the call's timing makes anyway.
//
// Cost when off: no check in either VM loop (the stop flag is read there
// anyway), and one load of sampleReq (a field of the worker's own, written
// only while profiling) where a slice ends: SigPreempted, end, endSlice
// and a suspension. A request stale by the time it is seen (the worker
// went idle, or took another task: its dispatch count moved on) is
// dropped, so idle time is never charged to the next task.

// Sampler receives the CPU samples of a scheduler (StartSampling).
type Sampler interface {
	// Sample records that t was running at stack (innermost first; see
	// vmloop.Exec.ProfileStack) when a sample was due. It runs on the
	// worker's thread between two Runs of t: it must not block, and must
	// not keep stack, which the worker reuses.
	Sample(t *Task, stack []vmloop.ProfFrame)
}

// HostSampler is a Sampler that also takes the samples due while a host
// intrinsic runs on a worker: the time of the call is charged to a frame
// of the intrinsic's own, above the Jade stack that called it.
type HostSampler interface {
	// SampleHost records that t spent d nanoseconds in host intrinsic
	// name, called at stack (innermost first: the calling instruction),
	// and that at least one sample was requested meanwhile. It runs on
	// the worker's thread, like Sample.
	SampleHost(t *Task, stack []vmloop.ProfFrame, name string, d int64)
}

// sampler is what StartSampling installed; a pointer to the interface so
// that a worker loads it with one atomic load. host is s as a
// HostSampler, or nil.
type samplerBox struct {
	s    Sampler
	host HostSampler
}

// StartSampling installs sp: from now on RequestSamples asks the busy
// workers for samples and they give them to sp. It fails when a sampler
// is installed already.
func (s *Scheduler) StartSampling(sp Sampler) error {
	if sp == nil {
		return errors.New("sched: StartSampling: nil sampler")
	}
	box := &samplerBox{s: sp}
	box.host, _ = sp.(HostSampler)
	if !s.sampler.CompareAndSwap(nil, box) {
		return errors.New("sched: StartSampling: a sampler is already installed")
	}
	return nil
}

// StopSampling removes the installed sampler and withdraws the requests
// not yet answered; a worker that is taking a sample now may still
// deliver it to the old sampler.
func (s *Scheduler) StopSampling() {
	s.sampler.Store(nil)
	for _, w := range s.workers {
		w.sampleReq.Store(0)
	}
}

// RequestSamples asks every busy worker for one sample of the task it
// runs, at that task's next safe point (see the design above). It does
// nothing without a sampler; it returns the number of workers asked.
func (s *Scheduler) RequestSamples() int {
	if s.sampler.Load() == nil {
		return 0
	}
	s.idleMu.Lock()
	busy := s.sampleBusy[:0]
	for _, w := range s.workers {
		busy = append(busy, !w.parked && !w.inGo.Load())
	}
	s.sampleBusy = busy
	s.idleMu.Unlock()
	n := 0
	for i, w := range s.workers {
		if !busy[i] {
			continue
		}
		// Before the stop: the worker that sees the stop sees the request.
		w.sampleReq.Store(w.dispatches.load() + 1)
		if ex := w.curEx(); ex != nil {
			ex.Stop()
		}
		n++
	}
	return n
}

// ExecTask returns the task whose slice runs ex, or nil: a heap profile
// labels a sampled allocation with its task's name. It must be called from
// within that slice (a vmloop.HeapSampler's callback runs there); called
// from anywhere else it reads a worker's own field unsynchronised.
func (s *Scheduler) ExecTask(ex *vmloop.Exec) *Task {
	for _, w := range s.workers {
		if w.curEx() == ex {
			return w.running // written by this thread at dispatch
		}
	}
	return nil
}

// ExecEngine returns the engine whose task runs ex (by its memory
// budget), or nil: a heap profile labels an allocation by it.
func (s *Scheduler) ExecEngine(ex *vmloop.Exec) *Engine {
	mem := ex.Memory()
	if mem == nil {
		return nil
	}
	for _, e := range s.Engines() {
		if e.mem == mem {
			return e
		}
	}
	return nil
}

// takeSample gives the sample asked for by a request to the sampler, if
// the request was made during this dispatch (the worker's dispatch count
// has not moved since); a stale request is dropped. Called only when
// sampleReq is set.
func (w *worker) takeSample(t *Task) {
	req := w.sampleReq.Swap(0)
	if req == 0 || req-1 != w.dispatches.load() {
		return
	}
	box := w.s.sampler.Load()
	if box == nil {
		return
	}
	w.stack = t.ex().ProfileStack(w.stack[:0])
	box.s.Sample(t, w.stack)
}

// samplePreempted takes the sample of a slice preempted while a request
// was pending and reports whether the slice goes on: the budget is not
// spent and neither a cancel nor a kick stopped it too. The stop is
// cleared before the cancel and kick flags are loaded: both are stored
// before their stop (doc.go), so a stop of theirs is never lost.
func (w *worker) samplePreempted(t *Task, budget int64) bool {
	w.takeSample(t)
	if budget <= 0 {
		return false
	}
	t.ex().ClearStop()
	return !t.has(flagCancel) && !w.s.kick.Load()
}

// sampleCall takes the sample pending when t calls a host intrinsic, at
// the calling instruction (called only when sampleReq is set).
func (w *worker) sampleCall(t *Task) {
	w.takeSample(t)
	w.clearSampleStop(t)
}

// sampleHost takes the sample requested while t's host intrinsic name
// ran for d nanoseconds (called only when sampleReq is set): a frame of
// the intrinsic's own above the calling instruction, for a HostSampler;
// a plain sample at the call for another Sampler.
func (w *worker) sampleHost(t *Task, name string, d int64) {
	req := w.sampleReq.Swap(0)
	if req != 0 && req-1 == w.dispatches.load() {
		if box := w.s.sampler.Load(); box != nil {
			w.stack = t.ex().RequestStack(w.stack[:0])
			if box.host != nil {
				box.host.SampleHost(t, w.stack, name, d)
			} else {
				box.s.Sample(t, w.stack)
			}
		}
	}
	w.clearSampleStop(t)
}

// clearSampleStop clears the stop a sample request put on t's Exec, so
// that the slice goes on past the host call, unless a cancel, a kick or
// a stop of the world wants it stopped too (each stores its flag before
// its stop, so one that comes after the load stops it again itself).
func (w *worker) clearSampleStop(t *Task) {
	if !t.ex().Stopped() {
		return
	}
	t.ex().ClearStop()
	if t.has(flagCancel) || w.s.kick.Load() || w.stop.Load() {
		t.ex().Stop()
	}
}
