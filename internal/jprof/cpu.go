package jprof

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/google/pprof/profile"

	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// DefaultPeriod is the time between two CPU samples of a busy worker.
const DefaultPeriod = 10 * time.Millisecond

// Target is the scheduler a CPU profile samples (*sched.Scheduler).
type Target interface {
	StartSampling(sched.Sampler) error
	StopSampling()
	RequestSamples() int
}

// Options configure a CPU profile. Zero fields take the defaults.
type Options struct {
	// Period is the time between two samples of a busy worker (default
	// DefaultPeriod); each sample is worth one Period of CPU time.
	Period time.Duration
	// TaskName names a task for the jade_task_name label ("": no label).
	// nil means the task's own name (sched.Task.Name: task.set_name or
	// a host spawn's name).
	TaskName func(*sched.Task) string
}

// CPUProfile is a CPU profile being taken (StartCPU).
type CPUProfile struct {
	tgt    Target
	w      io.Writer
	period time.Duration
	name   func(*sched.Task) string
	start  time.Time

	stop chan struct{}
	done chan struct{}

	mu      sync.Mutex
	samples map[cpuKey]*cpuRec
	stopped bool
}

type cpuKey struct {
	prog   *vmloop.Program
	stack  string // frameString
	engine string
	task   uint64
	name   string
	host   string // the host intrinsic the samples are in ("": Jade code)
}

type cpuRec struct {
	n  int64 // samples
	ns int64 // CPU time they are worth
}

// StartCPU starts a CPU profile of the Jade code that tgt's workers run;
// Stop writes it to w. It fails while another CPU profile samples tgt.
func StartCPU(tgt Target, w io.Writer, opts Options) (*CPUProfile, error) {
	if tgt == nil || w == nil {
		return nil, errors.New("jprof: start cpu profile: need a scheduler and a writer")
	}
	if opts.Period <= 0 {
		opts.Period = DefaultPeriod
	}
	if opts.TaskName == nil {
		opts.TaskName = (*sched.Task).Name
	}
	p := &CPUProfile{tgt: tgt, w: w, period: opts.Period, name: opts.TaskName, start: time.Now(),
		stop: make(chan struct{}), done: make(chan struct{}), samples: map[cpuKey]*cpuRec{}}
	if err := tgt.StartSampling(p); err != nil {
		return nil, fmt.Errorf("jprof: start cpu profile: %w", err)
	}
	go p.tick()
	return p, nil
}

// tick asks the workers for samples every period until Stop.
func (p *CPUProfile) tick() {
	defer close(p.done)
	t := time.NewTicker(p.period)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.tgt.RequestSamples()
		}
	}
}

// Sample records one sample of t at stack (sched.Sampler; on a worker).
func (p *CPUProfile) Sample(t *sched.Task, stack []vmloop.ProfFrame) {
	if len(stack) == 0 {
		return
	}
	p.add(t, stack, "", 1, p.period.Nanoseconds())
}

// add records n samples worth ns of CPU time of t at stack, in host
// intrinsic host ("": none).
func (p *CPUProfile) add(t *sched.Task, stack []vmloop.ProfFrame, host string, n, ns int64) {
	k := cpuKey{prog: t.Program(), stack: frameString(stack), engine: t.Engine().Name(), task: t.ID(), host: host}
	if p.name != nil {
		k.name = p.name(t)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	r := p.samples[k]
	if r == nil {
		r = &cpuRec{}
		p.samples[k] = r
	}
	r.n += n
	r.ns += ns
}

// SampleHost records the samples due while t ran host intrinsic name,
// called at stack, for d nanoseconds (sched.HostSampler; on a worker),
// under a frame "intr NAME" of their own: d in periods, at least one (a
// sample was requested during the call), worth max(d, period) of CPU
// time. A call longer than a period is always sampled, so it is worth
// its time; a shorter one is sampled with the chance d/period, so a
// period is what it is worth on average.
func (p *CPUProfile) SampleHost(t *sched.Task, stack []vmloop.ProfFrame, name string, d int64) {
	if len(stack) == 0 {
		return
	}
	per := p.period.Nanoseconds()
	p.add(t, stack, name, max(1, (d+per/2)/per), max(d, per))
}

// Samples returns how many samples the profile holds so far.
func (p *CPUProfile) Samples() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	var n int64
	for _, r := range p.samples {
		n += r.n
	}
	return n
}

// Stop ends the profile and writes it (gzipped protocol buffers) to the
// writer given to StartCPU. A second Stop fails.
func (p *CPUProfile) Stop() error {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return errors.New("jprof: stop cpu profile: already stopped")
	}
	p.stopped = true
	p.mu.Unlock()
	close(p.stop)
	<-p.done
	p.tgt.StopSampling()
	if err := p.profile().Write(p.w); err != nil {
		return fmt.Errorf("jprof: stop cpu profile: %w", err)
	}
	return nil
}

// profile builds the pprof profile of the samples taken (after Stop).
func (p *CPUProfile) profile() *profile.Profile {
	pp := &profile.Profile{
		SampleType:    []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType:    &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:        p.period.Nanoseconds(),
		TimeNanos:     p.start.UnixNano(),
		DurationNanos: time.Since(p.start).Nanoseconds(),
	}
	syms := newSymbols(pp)
	for k, r := range p.samples {
		labels := map[string][]string{LabelEngine: {k.engine}, LabelTask: {strconv.FormatUint(k.task, 10)}}
		if k.name != "" {
			labels[LabelTaskName] = []string{k.name}
		}
		locs := syms.stack(k.prog, frames(k.stack))
		if k.host != "" {
			locs = append([]*profile.Location{syms.host(k.host)}, locs...)
		}
		pp.Sample = append(pp.Sample, &profile.Sample{
			Location: locs,
			Value:    []int64{r.n, r.ns},
			Label:    labels,
		})
	}
	return pp
}
