package sched

import (
	"time"

	"github.com/jadevm/jade/timerwheel"
)

// Metrics is a read-only snapshot of the scheduler (spec §4.5). Reading it
// changes nothing (S-16): every field comes from atomics the workers
// publish; the counters are monotonic, the gauges are instantaneous and may
// be mutually inconsistent by the few tasks that move while it is read.
type Metrics struct {
	// RunnableTasks: tasks in run queues (local rings, lifo slots and the
	// inject queue) waiting for a worker.
	RunnableTasks int64 `json:"runnableTasks"`
	// WaitingTasks: tasks parked in Waiting (on a join, an event, a host call).
	WaitingTasks int64 `json:"waitingTasks"`
	// LiveTasks: tasks spawned and not completed (runnable, running, waiting).
	LiveTasks int64 `json:"liveTasks"`
	// ActiveWorkers: workers not parked (running a task or searching).
	ActiveWorkers int `json:"activeWorkers"`
	// QueuePressure: RunnableTasks per worker; above 1 every worker has a
	// backlog.
	QueuePressure float64 `json:"queuePressure"`
	// InjectQueue: tasks in the global inject queue.
	InjectQueue int64 `json:"injectQueue"`
	// InjectKicks: slices ended early at a safe point so that an outside
	// wake which found every worker busy runs without waiting for a slice
	// boundary.
	InjectKicks uint64 `json:"injectKicks"`
	// IOBackend: the workers' completion backend ("io_uring", "epoll"), or
	// "" without one.
	IOBackend string `json:"ioBackend"`
	// Workers: per-worker counters.
	Workers []WorkerMetrics `json:"workers"`
	// Engines: per-engine counts.
	Engines []EngineMetrics `json:"engines"`
}

// WorkerMetrics are the counters of one worker.
type WorkerMetrics struct {
	ID         int    `json:"id"`
	LocalQueue int    `json:"localQueue"` // tasks in its ring now
	Dispatches uint64 `json:"dispatches"` // slices run
	Steals     uint64 `json:"steals"`     // successful steals
	Parks      uint64 `json:"parks"`      // times it blocked
	// JoinsFirst counts the joins whose target, waiting to run next on
	// this worker, ran at the join on the joiner's slice instead of the
	// joiner waiting for it; WaitsTaken the other waits that the task
	// run first (from the lifo slot, before the waiter parked) woke, so
	// that the waiter went on without parking (ARCHITECTURE.md, "The lifo
	// slot's task runs first"). Each task run first is also a dispatch.
	JoinsFirst uint64 `json:"joinsFirst"`
	WaitsTaken uint64 `json:"waitsTaken"`
	// GoYields counts its hand-overs to Go's scheduler (at most one per
	// 8 ms; see ARCHITECTURE.md, "Run queues, stealing and parking").
	GoYields uint64 `json:"goYields"`
	// Times: where its wall time went; Times.Utilisation = busy / wall.
	Times WorkerTimes `json:"times"`
}

// EngineMetrics are the counts of one engine.
type EngineMetrics struct {
	ID   uint32 `json:"id"`
	Name string `json:"name"`
	// LiveTasks: the engine's tasks spawned and not completed
	// (Engine.LiveTasks: never below the tasks live when read, may count
	// one that is just ending).
	LiveTasks      int64 `json:"liveTasks"`
	ReductionLimit int64 `json:"reductionLimit"`
	// PendingTimers: armed timers of the engine (sleeps, wait timeouts,
	// periodic ticks) over all its shards.
	PendingTimers int64 `json:"pendingTimers"`
	// InFlightIO: socket and file operations of the engine in flight.
	InFlightIO int64 `json:"inFlightIO"`
	// Periodic: the engine's periodic-job metrics, nil when its
	// metricsConfig turns them off.
	Periodic *PeriodicMetrics `json:"periodic,omitempty"`
	// Latency: the engine's run-queue, wake and timer latency histograms.
	Latency LatencyMetrics `json:"latency"`
	// LongSlices, LongCalls and LongWaits count the slices, host calls
	// and sampled run-queue waits that lasted longer than the engine's
	// LongSlice, LongCall and LongWait thresholds.
	LongSlices uint64 `json:"longSlices"`
	LongCalls  uint64 `json:"longCalls"`
	LongWaits  uint64 `json:"longWaits"`
}

// PeriodicMetrics are the spec §4.5 periodic-work quantities of one engine:
// totals over its live jobs, and each job unless the engine's
// metricsConfig asks for totals only.
type PeriodicMetrics struct {
	Jobs int `json:"jobs"` // live periodic jobs
	// TargetRate: runs per second the jobs ask for (sum of 1/period).
	TargetRate float64 `json:"targetRate"`
	// ActualRate: runs per second observed over each job's last 16 run
	// starts, summed.
	ActualRate float64 `json:"actualRate"`
	// HandlerDuration: mean handler duration over the jobs' finished runs
	// (nanoseconds; a run lasts from the tick that starts it to the next
	// tick of its task).
	HandlerDuration int64 `json:"handlerDurationNs"`
	// OverrunCount: runs whose handler took longer than the period.
	OverrunCount uint64 `json:"overrunCount"`
	// PerJob: every job's metrics (MetricsPerJob only).
	PerJob []JobMetrics `json:"perJob,omitempty"`
}

// JobMetrics are one periodic job's metrics.
type JobMetrics struct {
	ID     uint64 `json:"id"`
	Task   uint64 `json:"task"`
	Policy string `json:"policy"`
	timerwheel.PeriodicMetrics
}

// Metrics takes a snapshot.
func (s *Scheduler) Metrics() Metrics {
	m := Metrics{
		WaitingTasks: s.waiting.Load(), LiveTasks: s.LiveTasks(),
		InjectQueue: s.inject.len(), InjectKicks: s.kicks.Load(), ActiveWorkers: len(s.workers) - s.IdleWorkers(),
		IOBackend: s.IOBackend(),
	}
	m.RunnableTasks = m.InjectQueue
	now := nanotime()
	for _, w := range s.workers {
		n := w.local.len()
		m.RunnableTasks += int64(n)
		if w.lifoFull() {
			m.RunnableTasks++ // the lifo slot: runnable, not in the ring
		}
		m.Workers = append(m.Workers, WorkerMetrics{ID: w.id, LocalQueue: n,
			Dispatches: w.dispatches.load(), JoinsFirst: w.firstJoins.load(), WaitsTaken: w.firstWoken.load(), Steals: w.steals.load(), Parks: w.parks.load(), GoYields: w.goYields.load(),
			Times: w.readTimes(now)})
	}
	if len(s.workers) > 0 {
		m.QueuePressure = float64(m.RunnableTasks) / float64(len(s.workers))
	}
	for _, e := range s.Engines() {
		cfg := e.cfg.Load()
		em := EngineMetrics{ID: e.id, Name: e.name, LiveTasks: e.LiveTasks(), ReductionLimit: cfg.ReductionLimit,
			PendingTimers: e.timers.Load(), InFlightIO: e.ioOps.Load(), Latency: e.latencyMetrics(s.latEvery),
			LongSlices: e.longSlices.Load(), LongCalls: e.longCalls.Load(), LongWaits: e.longWaits.Load()}
		if cfg.Metrics.Periodic != MetricsOff {
			em.Periodic = e.periodicMetrics(cfg.Metrics.Periodic == MetricsPerJob)
		}
		m.Engines = append(m.Engines, em)
	}
	return m
}

// periodicMetrics sums the engine's jobs.
func (e *Engine) periodicMetrics(perJob bool) *PeriodicMetrics {
	pm := &PeriodicMetrics{}
	var total time.Duration
	var finished uint64
	for _, j := range e.Jobs() {
		jm := j.Metrics()
		pm.Jobs++
		pm.TargetRate += jm.TargetRate
		pm.ActualRate += jm.ActualRate
		pm.OverrunCount += jm.OverrunCount
		total += jm.HandlerMean * time.Duration(jm.Finished)
		finished += jm.Finished
		if perJob {
			pm.PerJob = append(pm.PerJob, JobMetrics{ID: j.id, Task: j.owner, Policy: j.Policy().String(), PeriodicMetrics: jm})
		}
	}
	if finished > 0 {
		pm.HandlerDuration = int64(total) / int64(finished)
	}
	return pm
}
