package jade

import (
	"errors"
	"io"
	"sync"
	"time"

	"github.com/jadevm/jade/internal/errs"
	"github.com/jadevm/jade/internal/jprof"
)

// ErrNoProfile is the error (wrapped) of StopProfile and StopHeapProfile
// when no such profile runs: none was started, or it was stopped already,
// perhaps by Close or Shutdown, which write a profile still running.
var ErrNoProfile = errors.New("not started, or stopped already (Close and Shutdown stop running profiles)")

// profiles are the runtime's Jade profiles in progress.
type profiles struct {
	period time.Duration // Options.ProfilePeriod

	mu   sync.Mutex
	cpu  *jprof.CPUProfile
	heap *jprof.HeapProfile
	hw   io.Writer
}

// StartProfile starts a CPU profile of the Jade code the runtime runs:
// which Jade functions and .jasm lines the workers spend their time in,
// sampled every Options.ProfilePeriod (10 ms) at safe points and labelled by engine and task
// (package jprof). StopProfile writes it to w in pprof's format; Close and
// Shutdown stop and write a profile still running. It fails while a
// profile of this runtime is running.
func (o *Observer) StartProfile(w io.Writer) error {
	r := o.r
	r.prof.mu.Lock()
	defer r.prof.mu.Unlock()
	if r.prof.cpu != nil {
		return errors.New("jade: start profile: a CPU profile is running")
	}
	p, err := jprof.StartCPU(r.bus.Scheduler(), w, jprof.Options{Period: r.prof.period})
	if err != nil {
		return errs.Wrap("jade", "start profile", err)
	}
	r.prof.cpu = p
	return nil
}

// StopProfile stops the CPU profile started by StartProfile and writes
// it. It fails when none is running.
func (o *Observer) StopProfile() error {
	r := o.r
	p := r.prof.takeCPU()
	if p == nil {
		return errs.Wrap("jade", "stop profile: no CPU profile is running", ErrNoProfile)
	}
	return stopCPU(p)
}

func (ps *profiles) takeCPU() *jprof.CPUProfile {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p := ps.cpu
	ps.cpu = nil
	return p
}

func stopCPU(p *jprof.CPUProfile) error {
	if err := p.Stop(); err != nil {
		return errs.Wrap("jade", "stop profile", err)
	}
	return nil
}

// StartHeapProfile starts sampling the Jade heap allocations of every
// task, one in about 512 KiB on average (package jprof); StopHeapProfile
// writes the bytes and objects allocated since, and those still in use,
// by allocation site to w in pprof's format (Close and Shutdown write one
// still running). Heap sampling is process-wide: it fails while any heap
// profile runs in the process.
func (o *Observer) StartHeapProfile(w io.Writer) error {
	r := o.r
	r.prof.mu.Lock()
	defer r.prof.mu.Unlock()
	if r.prof.heap != nil {
		return errors.New("jade: start heap profile: a heap profile is running")
	}
	p, err := jprof.StartHeap(r.bus.Scheduler(), 0)
	if err != nil {
		return errs.Wrap("jade", "start heap profile", err)
	}
	r.prof.heap, r.prof.hw = p, w
	return nil
}

// StopHeapProfile stops the heap profile started by StartHeapProfile and
// writes it. It fails when none is running.
func (o *Observer) StopHeapProfile() error {
	r := o.r
	p, w := r.prof.takeHeap()
	if p == nil {
		return errs.Wrap("jade", "stop heap profile: no heap profile is running", ErrNoProfile)
	}
	return stopHeap(p, w)
}

func (ps *profiles) takeHeap() (*jprof.HeapProfile, io.Writer) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p, w := ps.heap, ps.hw
	ps.heap, ps.hw = nil, nil
	return p, w
}

func stopHeap(p *jprof.HeapProfile, w io.Writer) error {
	if err := p.Stop(); err != nil {
		return errs.Wrap("jade", "stop heap profile", err)
	}
	if err := p.Write(w); err != nil {
		return errs.Wrap("jade", "stop heap profile", err)
	}
	return nil
}

// stopProfiles stops and writes the profiles still running when the
// runtime closes (Close, Shutdown), so that a host that did not stop one
// still gets it and its sampling ends with the runtime.
func (r *Runtime) stopProfiles() error {
	var errs []error
	if p := r.prof.takeCPU(); p != nil {
		errs = append(errs, stopCPU(p))
	}
	if p, w := r.prof.takeHeap(); p != nil {
		errs = append(errs, stopHeap(p, w))
	}
	return errors.Join(errs...)
}
