package timerwheel

import (
	"errors"
	"fmt"
	"time"
)

// OverrunPolicy says what a periodic job does when a run ends after the
// job's next nominal instant, e.g. because its handler is slower than its
// period (spec §4.4).
type OverrunPolicy uint8

const (
	// PolicyInherit takes the engine's policy (see Resolve).
	PolicyInherit OverrunPolicy = iota
	// Drift, the default: the next run starts one period after the actual
	// completion. Nothing piles up; the phase drifts.
	Drift
	// Skip keeps the phase: missed instants are skipped (and counted), the
	// next run is the first instant at or after the completion.
	Skip
	// Queue catches missed instants up, back to back, keeping at most
	// MaxBacklog waiting; older excess instants are dropped (and counted).
	Queue
)

// String returns the policy's name.
func (p OverrunPolicy) String() string {
	switch p {
	case PolicyInherit:
		return "inherit"
	case Drift:
		return "drift"
	case Skip:
		return "skip"
	case Queue:
		return "queue"
	}
	return fmt.Sprintf("OverrunPolicy(%d)", uint8(p))
}

// Resolve returns the job's policy p, or the engine's if p is
// PolicyInherit, or Drift if neither is set.
func (p OverrunPolicy) Resolve(engine OverrunPolicy) OverrunPolicy {
	if p != PolicyInherit {
		return p
	}
	if engine != PolicyInherit {
		return engine
	}
	return Drift
}

// DefaultMaxBacklog is the Queue backlog bound used when
// PeriodicConfig.MaxBacklog is 0.
const DefaultMaxBacklog = 16

// PeriodicConfig describes one periodic job.
type PeriodicConfig struct {
	Period time.Duration // > 0
	// Policy is resolved with Resolve(engine) by the caller or, left as
	// PolicyInherit, becomes Drift.
	Policy OverrunPolicy
	// MaxBacklog bounds the instants a Queue job keeps waiting (not counting
	// the running one); 0 means DefaultMaxBacklog. Ignored by other policies.
	MaxBacklog int
}

// Validate reports whether c is usable. Errors read
// "timerwheel: periodic config: <cause>".
func (c PeriodicConfig) Validate() error {
	if c.Period <= 0 {
		return fmt.Errorf("timerwheel: periodic config: Period must be positive, got %v", c.Period)
	}
	if c.Policy > Queue {
		return fmt.Errorf("timerwheel: periodic config: unknown policy %v", c.Policy)
	}
	if c.MaxBacklog < 0 {
		return fmt.Errorf("timerwheel: periodic config: MaxBacklog must not be negative, got %d", c.MaxBacklog)
	}
	return nil
}

// Errors returned by Periodic.Start and Periodic.Finish.
var (
	ErrRunning    = errors.New("timerwheel: periodic start: handler already running")
	ErrNotDue     = errors.New("timerwheel: periodic start: not due yet")
	ErrNotRunning = errors.New("timerwheel: periodic finish: handler not running")
)

// rateWindow is the number of recent run starts ActualRate is computed over.
const rateWindow = 16

// Periodic is the clock-free policy engine of one periodic job: it is told
// when a run starts and ends and answers when the next run is due. It keeps
// the job's metrics (spec §4.5). At most one run is in progress: Start
// refuses a second one. A Periodic is not safe for concurrent use; the
// scheduler drives it from the worker that owns the job's timer.
//
// Times are int64 nanoseconds on the caller's monotonic clock. Nominal
// instants are first + k·Period.
type Periodic struct {
	period     int64
	policy     OverrunPolicy
	maxBacklog int64

	next      int64 // next nominal instant to serve
	startAt   int64 // earliest start of the next run (what Next returns)
	scheduled int64 // instant served by the current or last run
	started   int64 // start of the current or last run
	running   bool
	overran   bool // this run's overrun has been counted

	backlog   int64
	runs      uint64
	overruns  uint64
	refused   uint64
	skipped   uint64
	dropped   uint64
	lastDur   int64
	totalDur  int64
	maxDur    int64
	lastLate  int64
	starts    [rateWindow]int64
	startsLen int
}

// NewPeriodic returns a job whose first nominal instant is first.
func NewPeriodic(cfg PeriodicConfig, first int64) (*Periodic, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	mb := int64(cfg.MaxBacklog)
	if mb == 0 {
		mb = DefaultMaxBacklog
	}
	return &Periodic{
		period:     int64(cfg.Period),
		policy:     cfg.Policy.Resolve(PolicyInherit),
		maxBacklog: mb,
		next:       first,
		startAt:    first,
	}, nil
}

// Policy returns the job's resolved policy.
func (p *Periodic) Policy() OverrunPolicy { return p.policy }

// Next returns the clock value at which the next run should start: the
// deadline to arm in the wheel after NewPeriodic or Finish. While Queue
// catches up it is the previous run's end (run back to back).
func (p *Periodic) Next() int64 { return p.startAt }

// Running reports whether a run is in progress.
func (p *Periodic) Running() bool { return p.running }

// Start begins a run at now and returns the nominal instant it serves. It
// fails with ErrRunning while a run is in progress (counting one overrun for
// that run, and a refused start) and with ErrNotDue before Next.
//
// A late start (now ≥ Next + Period, e.g. the worker was busy) is handled by
// the policy: Drift serves Next; Skip serves the latest instant ≤ now and
// counts the ones before it as skipped; Queue serves the oldest waiting
// instant, dropping the oldest ones beyond MaxBacklog.
func (p *Periodic) Start(now int64) (scheduled int64, err error) {
	if p.running {
		p.refused++
		if !p.overran {
			p.overran = true
			p.overruns++
		}
		return 0, ErrRunning
	}
	if now < p.startAt {
		return 0, ErrNotDue
	}
	switch p.policy {
	case Skip:
		if due := (now-p.next)/p.period + 1; due > 1 {
			p.skipped += uint64(due - 1)
			p.next += (due - 1) * p.period
		}
	case Queue:
		due := int64(1)
		if now >= p.next {
			due = (now-p.next)/p.period + 1
		}
		if due > p.maxBacklog+1 {
			drop := due - p.maxBacklog - 1
			p.dropped += uint64(drop)
			p.next += drop * p.period
			due -= drop
		}
		p.backlog = due - 1
	default: // Drift
		p.next = p.startAt
	}
	p.scheduled = p.next
	p.next += p.period
	p.running = true
	p.overran = false
	p.started = now
	p.lastLate = now - p.scheduled
	p.runs++
	p.starts[p.startsLen%rateWindow] = now
	p.startsLen++
	return p.scheduled, nil
}

// Finish ends the run at end and returns Next: when the following run
// should start. A run whose handler took longer than Period counts as an
// overrun (once, also if a refused Start already counted it).
func (p *Periodic) Finish(end int64) (next int64, err error) {
	if !p.running {
		return 0, ErrNotRunning
	}
	p.running = false
	d := end - p.started
	p.lastDur = d
	p.totalDur += d
	p.maxDur = max(p.maxDur, d)
	if d > p.period && !p.overran {
		p.overruns++
	}
	p.overran = false
	switch p.policy {
	case Skip:
		if end > p.next {
			k := (end - p.next + p.period - 1) / p.period
			p.skipped += uint64(k)
			p.next += k * p.period
		}
		p.startAt = p.next
	case Queue:
		p.backlog = 0
		p.startAt = p.next
		if end >= p.next {
			due := (end-p.next)/p.period + 1
			if due > p.maxBacklog {
				drop := due - p.maxBacklog
				p.dropped += uint64(drop)
				p.next += drop * p.period
				due -= drop
			}
			p.backlog = due
			p.startAt = end
		}
	default: // Drift
		p.next = end + p.period
		p.startAt = p.next
	}
	return p.startAt, nil
}

// PeriodicMetrics are the spec §4.5 quantities of one job.
type PeriodicMetrics struct {
	Runs          uint64 // runs started
	Finished      uint64 // runs finished (Runs, less the one in progress)
	OverrunCount  uint64 // runs whose handler took longer than Period or met a refused Start (one per run at most)
	RefusedStarts uint64 // Start calls refused because a run was in progress
	Skipped       uint64 // instants skipped (Skip)
	Dropped       uint64 // instants dropped beyond MaxBacklog (Queue)
	Backlog       int    // instants due and waiting now (Queue)

	// TargetRate is 1/Period in runs per second.
	TargetRate float64
	// ActualRate is runs per second over the last (up to 16) run starts:
	// (n−1)/(last start − first start); 0 until two runs have started.
	ActualRate float64

	HandlerLast  time.Duration // duration of the last finished run
	HandlerMean  time.Duration // mean duration over finished runs
	HandlerMax   time.Duration
	LastLateness time.Duration // start of the last run − its nominal instant
}

// Metrics returns the job's metrics.
func (p *Periodic) Metrics() PeriodicMetrics {
	m := PeriodicMetrics{
		Runs:          p.runs,
		OverrunCount:  p.overruns,
		RefusedStarts: p.refused,
		Skipped:       p.skipped,
		Dropped:       p.dropped,
		Backlog:       int(p.backlog),
		TargetRate:    1e9 / float64(p.period),
		HandlerLast:   time.Duration(p.lastDur),
		HandlerMax:    time.Duration(p.maxDur),
		LastLateness:  time.Duration(p.lastLate),
	}
	finished := p.runs
	if p.running {
		finished--
	}
	m.Finished = finished
	if finished > 0 {
		m.HandlerMean = time.Duration(p.totalDur / int64(finished))
	}
	if n := min(p.startsLen, rateWindow); n >= 2 {
		last := p.starts[(p.startsLen-1)%rateWindow]
		first := p.starts[(p.startsLen-n)%rateWindow]
		if span := last - first; span > 0 {
			m.ActualRate = float64(n-1) * 1e9 / float64(span)
		}
	}
	return m
}
