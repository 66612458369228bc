package jprof

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"github.com/google/pprof/profile"

	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// DefaultHeapRate is the mean number of accounted heap bytes between two
// sampled allocations (as Go's runtime.MemProfileRate).
const DefaultHeapRate = 512 << 10

// EngineSource tells the engine of a task's Exec (*sched.Scheduler).
type EngineSource interface {
	ExecEngine(*vmloop.Exec) *sched.Engine
}

// TaskSource, where an EngineSource also is one (*sched.Scheduler), tells
// the task whose slice runs an Exec, for the jade_task_name label of its
// sampled allocations.
type TaskSource interface {
	ExecTask(*vmloop.Exec) *sched.Task
}

// HeapProfile is a heap profile being taken (StartHeap): Jade heap bytes
// by allocation site, allocated since the start and in use now.
type HeapProfile struct {
	src   EngineSource
	rate  int64
	start time.Time

	engines sync.Map // *vmloop.Budget -> engine name

	mu      sync.Mutex
	sites   map[heapKey]*heapSite
	stopped bool
}

// heapKey is one allocation site of one engine and task name. Task ids
// are left out on purpose: a server's hundred thousand tasks would make
// as many sites of one line; names are few (task.set_name, SpawnNamed).
type heapKey struct {
	prog   *vmloop.Program
	stack  string // frameString
	engine string
	name   string // the task's name, "" when unnamed
}

// heapSite is the estimated objects and bytes allocated at one site, and
// those of them freed since.
type heapSite struct {
	allocN, allocB, freeN, freeB float64
}

// heapObj is one sampled object (vmloop.HeapSample).
type heapObj struct {
	p    *HeapProfile
	site *heapSite
	n, b float64 // what the sample stands for
}

// StartHeap starts sampling the allocations of every task heap in the
// process, one in about rate accounted bytes (0: DefaultHeapRate); src
// names their engines (nil: no engine label). Only one heap profile runs
// at a time in a process.
func StartHeap(src EngineSource, rate int64) (*HeapProfile, error) {
	if rate <= 0 {
		rate = DefaultHeapRate
	}
	p := &HeapProfile{src: src, rate: rate, start: time.Now(), sites: map[heapKey]*heapSite{}}
	if err := vmloop.StartHeapSampling(p, rate); err != nil {
		return nil, fmt.Errorf("jprof: start heap profile: %w", err)
	}
	return p, nil
}

// SampleAlloc records a sampled allocation (vmloop.HeapSampler; on the
// allocating goroutine).
func (p *HeapProfile) SampleAlloc(e *vmloop.Exec, stack []vmloop.ProfFrame, size int64) vmloop.HeapSample {
	// Poisson sampling of bytes: an object of size bytes is sampled with
	// probability 1-exp(-size/rate), so it stands for the inverse.
	scale := 1 / -math.Expm1(-float64(size)/float64(p.rate))
	k := heapKey{prog: e.Program(), stack: frameString(stack), engine: p.engine(e), name: p.taskName(e)}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return nil
	}
	s := p.sites[k]
	if s == nil {
		s = &heapSite{}
		p.sites[k] = s
	}
	s.allocN += scale
	s.allocB += scale * float64(size)
	return &heapObj{p: p, site: s, n: scale, b: scale * float64(size)}
}

// engine names the engine of e's task.
func (p *HeapProfile) engine(e *vmloop.Exec) string {
	mem := e.Memory()
	if p.src == nil || mem == nil {
		return ""
	}
	if n, ok := p.engines.Load(mem); ok {
		return n.(string)
	}
	n := ""
	if eng := p.src.ExecEngine(e); eng != nil {
		n = eng.Name()
	}
	p.engines.Store(mem, n)
	return n
}

// taskName is the name of the task running e (on this thread: SampleAlloc
// runs inside its slice).
func (p *HeapProfile) taskName(e *vmloop.Exec) string {
	if ts, ok := p.src.(TaskSource); ok {
		if t := ts.ExecTask(e); t != nil {
			return t.Name()
		}
	}
	return ""
}

// Free moves the object's share from in use to freed (vmloop.HeapSample).
func (o *heapObj) Free() {
	o.p.mu.Lock()
	o.site.freeN += o.n
	o.site.freeB += o.b
	o.p.mu.Unlock()
}

// Write writes the profile as it is now (gzipped protocol buffers): what
// was allocated since StartHeap, and what of it is still in use. It may
// be called any number of times, before and after Stop.
func (p *HeapProfile) Write(w io.Writer) error {
	if err := p.profile().Write(w); err != nil {
		return fmt.Errorf("jprof: write heap profile: %w", err)
	}
	return nil
}

// Stop ends the sampling; the profile keeps what it has (Write). A
// second Stop fails.
func (p *HeapProfile) Stop() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return errors.New("jprof: stop heap profile: already stopped")
	}
	p.stopped = true
	vmloop.StopHeapSampling()
	return nil
}

func (p *HeapProfile) profile() *profile.Profile {
	pp := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"},
		},
		DefaultSampleType: "inuse_space",
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:            p.rate,
		TimeNanos:         p.start.UnixNano(),
		DurationNanos:     time.Since(p.start).Nanoseconds(),
	}
	syms := newSymbols(pp)
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, s := range p.sites {
		labels := map[string][]string{}
		if k.engine != "" {
			labels[LabelEngine] = []string{k.engine}
		}
		if k.name != "" {
			labels[LabelTaskName] = []string{k.name}
		}
		pp.Sample = append(pp.Sample, &profile.Sample{
			Location: syms.stack(k.prog, frames(k.stack)),
			Value: []int64{int64(math.Round(s.allocN)), int64(math.Round(s.allocB)),
				int64(math.Round(s.allocN - s.freeN)), int64(math.Round(s.allocB - s.freeB))},
			Label: labels,
		})
	}
	return pp
}
