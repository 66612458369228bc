package sched

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jadevm/jade/timerwheel"
)

// Job is a periodic job (spec §4.4) in the shape of Tokio's interval: the
// task that created it runs a loop whose body is the handler and calls
// Tick (time.tick) at the top of each iteration. Tick ends the previous
// run, waits until the next run is due under the job's overrun policy and
// starts it. Only the owner task ticks a job, so at most one handler
// instance runs at a time by construction; a handler slower than its
// period is an overrun, handled by the policy (Drift, Skip, Queue; see
// timerwheel.Periodic). The job ends with its task.
type Job struct {
	id     uint64
	engine *Engine
	owner  uint64 // id of the task that created the job (ids are never reused; records are)
	period time.Duration

	mu sync.Mutex
	p  *timerwheel.Periodic // guarded by mu (the owner drives it, metrics read it)
}

var nextJob atomic.Uint64

// ID returns the job's id (unique within the process).
func (j *Job) ID() uint64 { return j.id }

// Period returns the job's period.
func (j *Job) Period() time.Duration { return j.period }

// Policy returns the job's resolved overrun policy.
func (j *Job) Policy() timerwheel.OverrunPolicy { return j.p.Policy() }

// Metrics returns the job's spec §4.5 metrics (targetRate, actualRate,
// handlerDuration, overrunCount and the policy counters).
func (j *Job) Metrics() timerwheel.PeriodicMetrics {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.p.Metrics()
}

// ErrJob is wrapped by errors for misuse of a periodic job.
var ErrJob = errors.New("periodic job misuse")

// NewJob creates a periodic job of task t (running on a worker) whose first
// run is due one period from now. policy PolicyInherit takes the engine's
// overrunPolicy.
func (c *Control) NewJob(t *Task, period time.Duration, policy timerwheel.OverrunPolicy) (*Job, error) {
	e := t.engine
	if e.wheel.Load() == nil {
		return nil, e.noWheel("periodic")
	}
	cfg := timerwheel.PeriodicConfig{Period: period, Policy: policy.Resolve(e.cfg.Load().OverrunPolicy)}
	p, err := timerwheel.NewPeriodic(cfg, DeadlineAfter(nanotime(), int64(period)))
	if err != nil {
		return nil, fmt.Errorf("sched: periodic: %w: %w", err, ErrJob)
	}
	j := &Job{id: nextJob.Add(1), engine: e, owner: t.id, period: period, p: p}
	tm := t.timer()
	tm.jobs = append(tm.jobs, j)
	e.jobsMu.Lock()
	e.jobs = append(e.jobs, j)
	e.jobsMu.Unlock()
	return j, nil
}

// Tick ends the job's current run (if any) and starts the next one when it
// is due: it returns the nominal instant the run serves and ready = true.
// Otherwise it arms a wait of t until the run is due (using a timer of the
// engine's limit) and returns ready = false: the caller suspends and calls
// Tick again with resumed = true when t is woken.
func (c *Control) Tick(t *Task, j *Job, resumed bool) (scheduled int64, ready bool, err error) {
	if j.owner != t.id || j.engine != t.engine { // ids are unique per scheduler; engines are not shared
		return 0, false, fmt.Errorf("sched: periodic: job %d belongs to task %d, not task %d (only the creating task ticks a job): %w", j.id, j.owner, t.id, ErrJob)
	}
	now := nanotime()
	j.mu.Lock()
	if !resumed && j.p.Running() {
		if _, err := j.p.Finish(now); err != nil {
			j.mu.Unlock()
			return 0, false, fmt.Errorf("sched: periodic: %w", err)
		}
	}
	next := j.p.Next()
	if now >= next {
		sched, err := j.p.Start(now)
		j.mu.Unlock()
		if err != nil {
			return 0, false, fmt.Errorf("sched: periodic: %w", err)
		}
		return sched, true, nil
	}
	j.mu.Unlock()
	if err := c.ReserveTimer(t); err != nil {
		return 0, false, err
	}
	c.SleepUntil(t, next)
	return 0, false, nil
}

func (e *Engine) removeJob(j *Job) {
	e.jobsMu.Lock()
	if i := slices.Index(e.jobs, j); i >= 0 {
		e.jobs = slices.Delete(e.jobs, i, i+1)
	}
	e.jobsMu.Unlock()
}

// Jobs returns the engine's live periodic jobs.
func (e *Engine) Jobs() []*Job {
	e.jobsMu.Lock()
	defer e.jobsMu.Unlock()
	return slices.Clone(e.jobs)
}
