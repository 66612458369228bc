package sched

import (
	"math"

	"github.com/jadevm/jade/internal/jtrace"
)

// Run-queue latency sampling.
//
// A task becomes Runnable at a spawn (Launch), a wake (wakeAs, a fired
// timer, a wake that beat the park) or a requeue (a preempted or yielding
// slice). At each of these the enqueuing worker counts down its sampling
// tick; one enqueue in Config.LatencySample, and every enqueue of a task
// with per-task statistics (MetricsConfig.Tasks), stamps the task: the
// clock read goes into Task.flags (stampBits) beside flagStamped, and
// flagStampWake says whether a wake made it Runnable. The worker that
// dispatches it loads flags anyway; a stamped task costs it a second clock
// read, a clear of the stamp and the histogram adds. An unstamped
// enqueue costs a decrement and a branch, an unstamped dispatch a load
// and a branch.
//
// Why sampled: a clock read (time.Since of the runtime's monotonic clock)
// costs tens of nanoseconds (BenchmarkNanotime), and two per dispatch are
// more than 1 % of a spawn and join chain (BenchmarkChainedSpawnLatency:
// "every" against "off"). Sampling is by count, not by time or
// task, so every kind of dispatch is sampled at the same rate: a
// histogram's shape is that of all dispatches, its counts are a share of
// them (1/LatencySample; Metrics reports the rate).
//
// The stamp is 26 bits of the clock in units of 128 ns: a wait is
// measured to within 128 ns, and modulo 2^33 ns (8.6 s). No field of the
// task record was free (TestRecordSizes: 320 B, one more word costs 32 B a
// task), and a wait of over 8.6 s in a run queue means a stopped
// scheduler, which the gauges show.

const (
	stampShift     = 7 // the stamp's unit is 2^7 ns
	stampTimeShift = 6 // bits 6..31 of Task.flags
	stampTimeMask  = 1<<(32-stampTimeShift) - 1
	// stampBits is everything dispatch clears.
	stampBits = flagStamped | flagStampWake | stampTimeMask<<stampTimeShift
)

// DefaultLatencySample is Config.LatencySample's default: one enqueue in
// 256 is timestamped. A stamped enqueue and its dispatch cost two clock
// reads and four locked instructions (BenchmarkLatencyHooksStamped; an
// unsampled pair, BenchmarkLatencyHooksSkip), so at this rate the stamps
// cost each dispatch about a 256th of that, and a runtime doing 100k
// dispatches a second still records ~400 latencies a second.
const DefaultLatencySample = 256

// latencyEvery normalises Config.LatencySample: 0 is the default, a
// negative value turns sampling off (0).
func latencyEvery(n int) int32 {
	switch {
	case n == 0:
		return DefaultLatencySample
	case n < 0:
		return 0
	case n > math.MaxInt32:
		return math.MaxInt32
	}
	return int32(n)
}

// stampTime is the clock as stored in a stamp.
func stampTime(now int64) uint32 { return uint32(now>>stampShift) & stampTimeMask }

// stampEnqueue is called wherever t becomes Runnable, before it is
// visible on a run queue; w is the enqueuing worker or nil (the host, a
// completion from outside the workers). wake says a wake made it
// Runnable, unless w.stampSkip(t) said it need not be (the callers look
// first: that check is inlined).
func (s *Scheduler) stampEnqueue(w *worker, t *Task, wake bool) {
	var due bool
	if w != nil {
		if w.latLeft--; w.latLeft <= 0 {
			due = w.resetTick()
		}
	} else {
		due = s.hostTick()
	}
	if !due && t.flags.Load()&flagStats == 0 {
		return
	}
	f := flagStamped | stampTime(nanotime())<<stampTimeShift
	if wake {
		f |= flagStampWake
	}
	t.flags.Or(f)
}

// stampSkip reports whether an enqueue of t by w (nil: from outside the
// workers) is neither sampled nor needed for t's statistics, and counts it
// when so: the common case, small enough to be inlined.
func (w *worker) stampSkip(t *Task) bool {
	if w != nil && w.latLeft > 1 && t.flags.Load()&flagStats == 0 {
		w.latLeft--
		return true
	}
	return false
}

// resetTick restarts w's sampling countdown after it reached 0 and
// reports whether this enqueue is sampled (false when sampling is off).
func (w *worker) resetTick() bool {
	n := w.s.latEvery
	if n <= 0 {
		w.latLeft = math.MaxInt32
		return false
	}
	w.latLeft = n
	return true
}

// hostTick is the sampling tick of enqueues from outside the workers.
func (s *Scheduler) hostTick() bool {
	n := s.latEvery
	return n > 0 && s.hostTicks.Add(1)%uint32(n) == 0
}

// dispatched records the latency of a stamped task and the per-task
// statistics of one with them, at dispatch on w (f: t's flags, loaded by
// run, which calls this only when flagStamped or flagStats is set).
func (w *worker) dispatched(t *Task, f uint32) {
	var d int64
	if f&flagStamped != 0 {
		d = int64((stampTime(nanotime())-f>>stampTimeShift)&stampTimeMask) << stampShift
		t.flags.And(^uint32(stampBits))
		if hs := t.engine.hists; w.id < len(hs) {
			h := &hs[w.id]
			h.runq.add(d)
			if f&flagStampWake != 0 {
				h.wake.add(d)
			}
		}
		if lim := int64(t.engine.cfg.Load().LongWait); lim > 0 && d > lim {
			w.long(t, jtrace.LongWait, d, lim) // a latency outlier (trace_hooks.go)
		}
	}
	if f&flagStats != 0 {
		if r := t.rare.Load(); r != nil {
			r.slices.Add(1)
			r.runnable.Add(d)
		}
	}
}

// timerLate records that a timer of e due at deadline fired at now on w.
func (w *worker) timerLate(e *Engine, deadline, now int64) {
	if hs := e.hists; w.id < len(hs) {
		hs[w.id].timer.add(now - deadline)
	}
}

// LatencyMetrics are an engine's latency histograms (Metrics.Engines).
type LatencyMetrics struct {
	// SampleEvery: one enqueue in SampleEvery was timestamped (0: off);
	// RunQueue's and Wake's counts are that share of the dispatches.
	SampleEvery int `json:"sampleEvery"`
	// RunQueue: time from Runnable (a spawn, a wake, a requeue after a
	// slice) to Running — Go's /sched/latencies:seconds.
	RunQueue Histogram `json:"runQueue"`
	// Wake: time from a wake (Waiting → Runnable, including a timer's)
	// to Running; a subset of RunQueue's samples.
	Wake Histogram `json:"wake"`
	// TimerLateness: how long after its deadline each of the engine's
	// timers fired (sleeps, wait and I/O timeouts, periodic ticks; every
	// timer, not sampled). What the woken task then waits is in Wake.
	TimerLateness Histogram `json:"timerLateness"`
}

// latencyMetrics sums e's per-worker histograms.
func (e *Engine) latencyMetrics(every int32) LatencyMetrics {
	m := LatencyMetrics{SampleEvery: int(every)}
	for i := range e.hists {
		h := &e.hists[i]
		m.RunQueue.merge(&h.runq)
		m.Wake.merge(&h.wake)
		m.TimerLateness.merge(&h.timer)
	}
	return m
}
