package bus

import (
	"errors"
	"fmt"
	"time"

	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/timerwheel"
	"github.com/jadevm/jade/vmloop"
)

// The time intrinsics of ABI 1.1: time.now, time.sleep, time.sleep_until,
// time.timeout (the one-shot timeout of the next wait), time.periodic,
// time.tick, time.job_metric and time.job_stats.

// Job metric selectors of time.job_metric.
const (
	jobRuns = iota
	jobOverruns
	jobTargetRate
	jobActualRate
	jobHandlerMeanNs
	jobHandlerMaxNs
	jobSkipped
	jobDropped
	jobLastLatenessNs
)

// timeSleep: time.sleep ns.
func (b *Bus) timeSleep(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	return b.sleepUntil(t, ex, req, sched.DeadlineAfter(b.s.Now(), ex.ArgI64(0)), ex.ArgI64(0) <= 0)
}

// timeSleepUntil: time.sleep_until deadline.
func (b *Bus) timeSleepUntil(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	d := ex.ArgI64(0)
	return b.sleepUntil(t, ex, req, d, d <= b.s.Now())
}

// sleepResume completes a sleep.
func (b *Bus) sleepResume(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	return completeVoid(ex, sched.ActContinue)
}

// timeTimeout: time.timeout ns, the one-shot timeout of the task's next
// wait.
func (b *Bus) timeTimeout(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	if !t.Engine().HasWheel() {
		return raise(ex, noWheel(t, req))
	}
	b.ctl.SetTimeout(t, ex.ArgI64(0))
	return completeVoid(ex, sched.ActContinue)
}

// timePeriodic: time.periodic period, policy, a job the task owns.
func (b *Bus) timePeriodic(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	period, pol := ex.ArgI64(0), ex.ArgI64(1)
	if period <= 0 || pol < 0 || pol > int64(timerwheel.Queue) {
		return raise(ex, vmloop.Err(vmloop.ErrKindError, fmt.Sprintf("time.periodic: period %d ns must be positive and policy %d one of 0 (engine's), 1 drift, 2 skip, 3 queue", period, pol)))
	}
	j, err := b.ctl.NewJob(t, time.Duration(period), timerwheel.OverrunPolicy(pol))
	if err != nil {
		return raise(ex, reqError(req, err, vmloop.ErrKindError))
	}
	return complete(ex, vmloop.Ext(vmloop.KindExt, j), sched.ActContinue)
}

// timeTick: time.tick job, waits for the job's next tick.
func (b *Bus) timeTick(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	j, a := jobArg(ex, req)
	if j == nil {
		return a
	}
	return b.tick(t, ex, req, j, false)
}

// tickResume completes a tick of a woken task.
func (b *Bus) tickResume(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	j, a := jobArg(ex, req)
	if j == nil {
		return a
	}
	return b.tick(t, ex, req, j, true)
}

// timeJobMetric: time.job_metric job, selector.
func (b *Bus) timeJobMetric(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	j, a := jobArg(ex, req)
	if j == nil {
		return a
	}
	v, err := jobMetric(j, ex.ArgI64(1))
	if err != nil {
		return raise(ex, vmloop.Err(vmloop.ErrKindError, err.Error()))
	}
	return complete(ex, vmloop.F64(v), sched.ActContinue)
}

// timeJobStats: time.job_stats job, a line of the job's statistics.
func (b *Bus) timeJobStats(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	j, a := jobArg(ex, req)
	if j == nil {
		return a
	}
	return complete(ex, vmloop.Str(jobStats(j)), sched.ActContinue)
}

func (b *Bus) sleepUntil(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request, deadline int64, now bool) sched.Action {
	if !t.Engine().HasWheel() {
		return raise(ex, noWheel(t, req))
	}
	if now {
		return completeVoid(ex, sched.ActContinue)
	}
	if err := b.ctl.ReserveTimer(t); err != nil {
		return raise(ex, reqError(req, err, vmloop.ErrKindError))
	}
	b.ctl.SleepUntil(t, deadline)
	return sched.ActSuspend
}

func (b *Bus) tick(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request, j *sched.Job, resumed bool) sched.Action {
	at, ready, err := b.ctl.Tick(t, j, resumed)
	switch {
	case err != nil:
		return raise(ex, reqError(req, err, vmloop.ErrKindError))
	case !ready:
		return sched.ActSuspend
	}
	return complete(ex, vmloop.I64(at), sched.ActContinue)
}

// timedWait runs handle, the handler of a wait that time.timeout bounds,
// under the task's one-shot timeout: the one place that decides what
// becomes of it, so that no path of a handler can leave it behind. The
// timeout is taken before the handler runs. A wait that suspended arms
// it; one that completed without suspending (an accept of a connection
// already waiting, a write the socket takes at once, a join of an ended
// task, an evwait on a signalled event), failed or trapped drops it
// (docs/ISA.md: "a wait that completes at once drops the timeout"). The
// rows of the command table marked timed come here (dispatch), and so do
// blocking host calls (callHost).
func (b *Bus) timedWait(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request, handle func(b *Bus, t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action) sched.Action {
	d, has, a, ok := b.beginWait(t, ex, req)
	if !ok {
		return a
	}
	return b.endWait(t, d, has, handle(b, t, ex, req))
}

// timedWaitOwn is timedWait for a wait with a deadline operand of its own
// (sel.wait's timeout, ns; < 0: none): the one-shot time.timeout is taken
// as timedWait takes it, and the wait, if it suspends, is bounded by the
// earlier of the two. ownFirst reports that the armed deadline is the
// operand's (its fire is the wait's result, not a TimeoutError).
func (b *Bus) timedWaitOwn(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request, own int64, handle func(b *Bus, t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action) (a sched.Action, ownFirst bool) {
	d, has, a, ok := b.beginWait(t, ex, req)
	if !ok {
		return a, false
	}
	if own < 0 {
		return b.endWait(t, d, has, handle(b, t, ex, req)), false
	}
	if !has {
		if err := b.ctl.ReserveTimer(t); err != nil {
			return raise(ex, reqError(req, err, vmloop.ErrKindError)), false
		}
	}
	now := b.s.Now()
	deadline := sched.DeadlineAfter(now, own)
	ownFirst = true
	if has {
		if one := sched.DeadlineAfter(now, d); one < deadline {
			deadline, ownFirst = one, false
		}
	}
	return b.endWaitAt(t, deadline, handle(b, t, ex, req)), ownFirst
}

// beginWait takes the task's one-shot timeout (time.timeout) before a wait
// and reserves its timer; it returns the timeout and whether one is set.
// A failed reservation is thrown: the wait is not started.
func (b *Bus) beginWait(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) (d int64, has bool, a sched.Action, ok bool) {
	d, has = b.ctl.TakeTimeout(t)
	if !has {
		return 0, false, 0, true
	}
	if err := b.ctl.ReserveTimer(t); err != nil {
		return 0, false, raise(ex, reqError(req, err, vmloop.ErrKindError)), false
	}
	return d, true, 0, true
}

// endWait finishes what beginWait started: when the wait suspended the
// timeout is armed, d from now, otherwise its reservation is given back.
func (b *Bus) endWait(t *sched.Task, d int64, has bool, a sched.Action) sched.Action {
	if has {
		return b.endWaitAt(t, sched.DeadlineAfter(b.s.Now(), d), a)
	}
	return a
}

// endWaitAt is endWait with the timeout's deadline: a wait that suspended
// arms its reserved timer at deadline, any other gives the reservation
// back.
func (b *Bus) endWaitAt(t *sched.Task, deadline int64, a sched.Action) sched.Action {
	if a == sched.ActSuspend {
		b.ctl.ArmTimer(t, deadline, true)
	} else {
		b.ctl.DropTimer(t)
	}
	return a
}

// timedOut throws the TimeoutError of a wait whose timeout fired.
func timedOut(ex *vmloop.Exec, req *vmloop.Request, what string) sched.Action {
	return raise(ex, vmloop.Err(vmloop.ErrKindTimeout, fmt.Sprintf("%s: timed out waiting for %s", req.Intr.Name, what)))
}

func noWheel(t *sched.Task, req *vmloop.Request) vmloop.Value {
	e := t.Engine()
	return vmloop.Err(vmloop.ErrKindError, fmt.Sprintf("%s: engine %q (id %d) has no timer wheel; declare it with a timerWheelConfig", req.Intr.Name, e.Name(), e.ID()))
}

// reqError is the catchable error of a request that failed with err: a
// ResourceError for an exhausted engine limit, else of the given kind,
// with the intrinsic's name in front.
func reqError(req *vmloop.Request, err error, kind string) vmloop.Value {
	if errors.Is(err, sched.ErrLimit) {
		kind = vmloop.ErrKindResource
	}
	return vmloop.Err(kind, req.Intr.Name+": "+err.Error())
}

func jobArg(ex *vmloop.Exec, req *vmloop.Request) (*sched.Job, sched.Action) {
	obj, err := ex.ArgObj(0, vmloop.KindExt)
	if err != nil {
		return nil, trap(ex, err)
	}
	j, ok := obj.(*sched.Job)
	if !ok {
		return nil, trap(ex, vmloop.TrapInfo{Code: vmloop.TrapHandle, Msg: fmt.Sprintf("%s: argument is %s, want a periodic job from time.periodic", req.Intr.Name, extName(obj))})
	}
	return j, sched.ActContinue
}

func jobMetric(j *sched.Job, which int64) (float64, error) {
	m := j.Metrics()
	switch which {
	case jobRuns:
		return float64(m.Runs), nil
	case jobOverruns:
		return float64(m.OverrunCount), nil
	case jobTargetRate:
		return m.TargetRate, nil
	case jobActualRate:
		return m.ActualRate, nil
	case jobHandlerMeanNs:
		return float64(m.HandlerMean), nil
	case jobHandlerMaxNs:
		return float64(m.HandlerMax), nil
	case jobSkipped:
		return float64(m.Skipped), nil
	case jobDropped:
		return float64(m.Dropped), nil
	case jobLastLatenessNs:
		return float64(m.LastLateness), nil
	}
	return 0, fmt.Errorf("time.job_metric: unknown metric %d (0 runs, 1 overruns, 2 targetRate, 3 actualRate, 4 handler mean ns, 5 handler max ns, 6 skipped, 7 dropped, 8 last lateness ns)", which)
}

func jobStats(j *sched.Job) string {
	m := j.Metrics()
	return fmt.Sprintf("job %d: policy=%s runs=%d targetRate=%.1f/s actualRate=%.1f/s handlerMean=%v handlerMax=%v overruns=%d skipped=%d dropped=%d",
		j.ID(), j.Policy(), m.Runs, m.TargetRate, m.ActualRate, m.HandlerMean, m.HandlerMax, m.OverrunCount, m.Skipped, m.Dropped)
}
