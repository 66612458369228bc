// Package prometheus exports a Jade runtime's scheduler metrics (spec
// §4.5) to Prometheus. It lives in its own module so the core module does
// not depend on client_golang.
package prometheus

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jadevm/jade"
)

// Source is what the collector reads: a runtime's *jade.Observer
// (Runtime.Observe).
type Source interface {
	Metrics() jade.Metrics
}

// Collector is a prometheus.Collector over a scheduler snapshot. Each
// scrape takes one read-only snapshot (S-16).
type Collector struct {
	src Source

	runnable, waiting, live, active, pressure, inject *prometheus.Desc
	injectKicks                                       *prometheus.Desc
	dispatches, steals, parks, goYields, localQueue   *prometheus.Desc
	engineLive, engineReductions                      *prometheus.Desc
	engineTimers, engineIO                            *prometheus.Desc
	jobs, targetRate, actualRate, handlerDur, overrun *prometheus.Desc
	jobTarget, jobActual, jobHandler, jobOverrun      *prometheus.Desc
	// Latency histograms (per engine) and worker times (metrics.go).
	runQueue, wake, timerLate, sampleEvery *prometheus.Desc
	wall, busy, parked, searching, goYield *prometheus.Desc
	syscall, hostCall, utilisation         *prometheus.Desc
}

// NewCollector returns a collector for src; register it with a
// prometheus.Registerer.
func NewCollector(src Source) *Collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("jade_"+name, help, labels, nil)
	}
	return &Collector{
		src:              src,
		runnable:         d("runnable_tasks", "Tasks in run queues waiting for a worker."),
		waiting:          d("waiting_tasks", "Tasks parked in Waiting."),
		live:             d("live_tasks", "Tasks spawned and not completed."),
		active:           d("active_workers", "Workers not parked."),
		pressure:         d("queue_pressure", "Runnable tasks per worker."),
		inject:           d("inject_queue_tasks", "Tasks in the global inject queue."),
		injectKicks:      d("inject_kicks_total", "Slices ended early at a safe point because an outside wake found every worker busy."),
		dispatches:       d("worker_dispatches_total", "Slices run by a worker.", "worker"),
		steals:           d("worker_steals_total", "Successful steals by a worker.", "worker"),
		parks:            d("worker_parks_total", "Times a worker blocked.", "worker"),
		goYields:         d("worker_go_yields_total", "Times a worker handed its goroutine to Go's scheduler.", "worker"),
		localQueue:       d("worker_local_queue_tasks", "Tasks in a worker's local ring.", "worker"),
		engineLive:       d("engine_live_tasks", "Live tasks of an engine.", "engine"),
		engineReductions: d("engine_reduction_limit", "Reduction budget per dispatch of an engine.", "engine"),
		engineTimers:     d("engine_pending_timers", "Armed timers (sleeps, wait timeouts, periodic ticks) of an engine.", "engine"),
		engineIO:         d("engine_inflight_io", "Socket and file operations of an engine in flight.", "engine"),
		jobs:             d("engine_periodic_jobs", "Live periodic jobs of an engine.", "engine"),
		targetRate:       d("engine_periodic_target_rate", "Runs per second an engine's periodic jobs ask for (targetRate).", "engine"),
		actualRate:       d("engine_periodic_actual_rate", "Runs per second observed over the jobs' recent runs (actualRate).", "engine"),
		handlerDur:       d("engine_periodic_handler_seconds", "Mean handler duration of an engine's periodic jobs (handlerDuration).", "engine"),
		overrun:          d("engine_periodic_overruns_total", "Runs whose handler took longer than the period (overrunCount).", "engine"),
		jobTarget:        d("job_target_rate", "Runs per second a periodic job asks for.", "engine", "job"),
		jobActual:        d("job_actual_rate", "Runs per second a periodic job achieved recently.", "engine", "job"),
		jobHandler:       d("job_handler_seconds", "Mean handler duration of a periodic job.", "engine", "job"),
		jobOverrun:       d("job_overruns_total", "Overrunning runs of a periodic job.", "engine", "job"),
		runQueue:         d("engine_run_queue_latency_seconds", "Time from Runnable to Running of the sampled dispatches of an engine's tasks (Go's /sched/latencies:seconds).", "engine"),
		wake:             d("engine_wake_latency_seconds", "Time from a wake to Running of the sampled dispatches after a wake.", "engine"),
		timerLate:        d("engine_timer_lateness_seconds", "How long after its deadline each timer of an engine fired.", "engine"),
		sampleEvery:      d("engine_latency_sample_every", "One enqueue in this many is timestamped for the latency histograms (0: off).", "engine"),
		wall:             d("worker_wall_seconds_total", "Wall time since a worker started.", "worker"),
		busy:             d("worker_busy_seconds_total", "Wall time a worker was neither parked, searching nor handed to Go's scheduler.", "worker"),
		parked:           d("worker_parked_seconds_total", "Time a worker was parked.", "worker"),
		searching:        d("worker_searching_seconds_total", "Time a worker spun looking for work to steal.", "worker"),
		goYield:          d("worker_go_yield_seconds_total", "Time a worker was handed to Go's scheduler.", "worker"),
		syscall:          d("worker_syscall_seconds_total", "Time a worker spent in non-blocking polls of its completion backend (part of busy).", "worker"),
		hostCall:         d("worker_host_call_seconds_total", "Time a worker spent in host intrinsics (part of busy).", "worker"),
		utilisation:      d("worker_utilisation", "Busy time over wall time of a worker since it started.", "worker"),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.runnable, c.waiting, c.live, c.active, c.pressure, c.inject, c.injectKicks,
		c.dispatches, c.steals, c.parks, c.goYields, c.localQueue, c.engineLive, c.engineReductions,
		c.engineTimers, c.engineIO, c.jobs, c.targetRate, c.actualRate, c.handlerDur, c.overrun,
		c.jobTarget, c.jobActual, c.jobHandler, c.jobOverrun,
		c.runQueue, c.wake, c.timerLate, c.sampleEvery, c.wall, c.busy, c.parked, c.searching, c.goYield,
		c.syscall, c.hostCall, c.utilisation} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	m := c.src.Metrics()
	g := func(d *prometheus.Desc, v float64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, l...)
	}
	k := func(d *prometheus.Desc, v uint64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), l...)
	}
	g(c.runnable, float64(m.RunnableTasks))
	g(c.waiting, float64(m.WaitingTasks))
	g(c.live, float64(m.LiveTasks))
	g(c.active, float64(m.ActiveWorkers))
	g(c.pressure, m.QueuePressure)
	g(c.inject, float64(m.InjectQueue))
	k(c.injectKicks, m.InjectKicks)
	for _, w := range m.Workers {
		id := strconv.Itoa(w.ID)
		k(c.dispatches, w.Dispatches, id)
		k(c.steals, w.Steals, id)
		k(c.parks, w.Parks, id)
		k(c.goYields, w.GoYields, id)
		g(c.localQueue, float64(w.LocalQueue), id)
		x := w.Times
		s := func(d *prometheus.Desc, ns int64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(ns)/1e9, id)
		}
		s(c.wall, x.WallNs)
		s(c.busy, x.BusyNs)
		s(c.parked, x.ParkedNs)
		s(c.searching, x.SearchingNs)
		s(c.goYield, x.GoYieldNs)
		s(c.syscall, x.SyscallNs)
		s(c.hostCall, x.HostCallNs)
		g(c.utilisation, x.Utilisation, id)
	}
	for _, e := range m.Engines {
		g(c.engineLive, float64(e.LiveTasks), e.Name)
		g(c.engineReductions, float64(e.ReductionLimit), e.Name)
		g(c.engineTimers, float64(e.PendingTimers), e.Name)
		g(c.engineIO, float64(e.InFlightIO), e.Name)
		g(c.sampleEvery, float64(e.Latency.SampleEvery), e.Name)
		ch <- histogram(c.runQueue, e.Latency.RunQueue, e.Name)
		ch <- histogram(c.wake, e.Latency.Wake, e.Name)
		ch <- histogram(c.timerLate, e.Latency.TimerLateness, e.Name)
		if p := e.Periodic; p != nil {
			g(c.jobs, float64(p.Jobs), e.Name)
			g(c.targetRate, p.TargetRate, e.Name)
			g(c.actualRate, p.ActualRate, e.Name)
			g(c.handlerDur, float64(p.HandlerDuration)/1e9, e.Name)
			k(c.overrun, p.OverrunCount, e.Name)
			for _, j := range p.PerJob {
				id := strconv.FormatUint(j.ID, 10)
				g(c.jobTarget, j.TargetRate, e.Name, id)
				g(c.jobActual, j.ActualRate, e.Name, id)
				g(c.jobHandler, j.HandlerMean.Seconds(), e.Name, id)
				k(c.jobOverrun, j.OverrunCount, e.Name, id)
			}
		}
	}
}

// histogram converts a latency histogram to a Prometheus one with a
// bucket boundary at every power of two nanoseconds of h (its fine
// buckets split each octave; summing them at octave bounds keeps a
// scrape to ~31 series per histogram).
func histogram(d *prometheus.Desc, h jade.Histogram, labels ...string) prometheus.Metric {
	buckets := map[float64]uint64{}
	var cum uint64
	for i, c := range h.Counts {
		if i > 0 && i < len(h.BoundsNs) {
			if b := h.BoundsNs[i]; b&(b-1) == 0 {
				buckets[float64(b)/1e9] = cum
			}
		}
		cum += c
	}
	return prometheus.MustNewConstHistogram(d, h.Count, float64(h.SumNs)/1e9, buckets, labels...)
}
