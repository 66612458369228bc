package sched

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/jadevm/jade/timerwheel"
)

// Job is a periodic job (spec §4.4) in the shape of Tokio's interval: the
// task that created it runs a loop whose body is the handler and calls
// Tick (time.tick) at the top of each iteration. Tick ends the previous
// run, waits until the next run is due under the job's overrun policy and
// starts it. Only the owner task ticks a job, so at most one handler
// instance runs at a time by construction; a handler slower than its
// period is an overrun, handled by the policy (Drift, Skip, Queue; see
// timerwheel.Periodic). The job ends with its task, or before when the
// last heap object naming it is freed (vmloop.ExtRefs): a task that frees
// its job's handle gives the job up.
//
// A live job counts jobBytes in its engine's memory budget (a job that
// does not fit is refused with a catchable ResourceError) and is listed
// in its engine's and its owner's job lists, from which it is removed in
// O(1) (jobsMu; eidx and tidx are its places in them).
type Job struct {
	id     uint64
	engine *Engine
	owner  uint64 // id of the task that created the job (ids are never reused; records are)
	period time.Duration

	mu sync.Mutex
	p  *timerwheel.Periodic // guarded by mu (the owner drives it, metrics read it)

	// refs is the number of heap objects naming the job (ExtRef); the job
	// ends when it drops to zero.
	refs atomic.Int64
	// Guarded by engine.jobsMu. Invariant: tm != nil exactly while the job
	// is live: then engine.jobs[eidx] == j, tm.jobs[tidx] == j, and the job
	// holds jobBytes of the engine's budget. tm is the owner's timer
	// state, valid while the job is live (the owner's end ends its jobs,
	// under jobsMu, before its record can be reused).
	tm         *taskTimer
	eidx, tidx int
}

// jobBytes is what a live job counts in its engine's memory budget: the
// Job, its timerwheel.Periodic and its places in the two lists.
const jobBytes = int64(unsafe.Sizeof(Job{})) + int64(unsafe.Sizeof(timerwheel.Periodic{})) + 2*8

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
	if !e.mem.Take(jobBytes) {
		return nil, fmt.Errorf("sched: periodic: engine %q: its tasks hold %d of its %d bytes of memory (memoryBytes limit): %w", e.name, e.mem.Used(), e.mem.Limit(), ErrLimit)
	}
	j := &Job{id: nextJob.Add(1), engine: e, owner: t.id, period: period, p: p}
	tm := t.timer()
	tm.madeJobs = true
	e.jobsMu.Lock()
	j.tm, j.tidx, j.eidx = tm, len(tm.jobs), len(e.jobs)
	tm.jobs = append(tm.jobs, j)
	e.jobs = append(e.jobs, j)
	e.jobsMu.Unlock()
	return j, nil
}

// ExtRef counts the heap objects naming the job (vmloop.ExtRefs); the
// last one freed ends the job.
func (j *Job) ExtRef(delta int) {
	if j.refs.Add(int64(delta)) == 0 && delta < 0 {
		j.engine.jobsMu.Lock()
		j.engine.endJobLocked(j)
		j.engine.jobsMu.Unlock()
	}
}

// endJobLocked ends the live job j (a no-op for one that has ended):
// it leaves both lists and gives back its share of the budget (jobsMu
// held).
func (e *Engine) endJobLocked(j *Job) {
	if j.tm == nil {
		return
	}
	e.jobs = dropJobAt(e.jobs, j.eidx, func(m *Job, i int) { m.eidx = i })
	j.tm.jobs = dropJobAt(j.tm.jobs, j.tidx, func(m *Job, i int) { m.tidx = i })
	j.tm = nil
	e.mem.Give(jobBytes)
}

// dropJobAt removes element i of list by moving the last one into its
// place (move tells that job its new index), and lets a list that has
// shrunk to a quarter of its capacity go for a smaller one, so that a
// burst of jobs does not pin its peak.
func dropJobAt(list []*Job, i int, move func(*Job, int)) []*Job {
	last := len(list) - 1
	if i != last {
		list[i] = list[last]
		move(list[i], i)
	}
	list[last] = nil
	list = list[:last]
	if c := cap(list); c > 64 && len(list) < c/4 {
		list = slices.Clone(list)
	}
	return list
}

// endJobs ends the jobs of a completing task (its timer state tm).
func (e *Engine) endJobs(tm *taskTimer) {
	e.jobsMu.Lock()
	for n := len(tm.jobs); n > 0; n = len(tm.jobs) {
		e.endJobLocked(tm.jobs[n-1])
	}
	tm.jobs, tm.madeJobs = nil, false
	e.jobsMu.Unlock()
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

// Jobs returns the engine's live periodic jobs.
func (e *Engine) Jobs() []*Job {
	e.jobsMu.Lock()
	defer e.jobsMu.Unlock()
	return slices.Clone(e.jobs)
}
