package sched

// Metrics is a read-only snapshot of the scheduler (spec §4.5). Reading it
// changes nothing (S-16): every field comes from atomics the workers
// publish; the counters are monotonic, the gauges are instantaneous and may
// be mutually inconsistent by the few tasks that move while it is read.
type Metrics struct {
	// RunnableTasks: tasks in run queues (local rings and the inject queue)
	// waiting for a worker.
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
}

// EngineMetrics are the counts of one engine.
type EngineMetrics struct {
	ID             uint32 `json:"id"`
	Name           string `json:"name"`
	LiveTasks      int64  `json:"liveTasks"`
	ReductionLimit int64  `json:"reductionLimit"`
}

// Metrics takes a snapshot.
func (s *Scheduler) Metrics() Metrics {
	m := Metrics{
		WaitingTasks: s.waiting.Load(), LiveTasks: s.live.Load(),
		InjectQueue: s.inject.len(), ActiveWorkers: len(s.workers) - s.IdleWorkers(),
	}
	m.RunnableTasks = m.InjectQueue
	for _, w := range s.workers {
		n := w.local.len()
		m.RunnableTasks += int64(n)
		m.Workers = append(m.Workers, WorkerMetrics{ID: w.id, LocalQueue: n,
			Dispatches: w.dispatches.Load(), Steals: w.steals.Load(), Parks: w.parks.Load()})
	}
	if len(s.workers) > 0 {
		m.QueuePressure = float64(m.RunnableTasks) / float64(len(s.workers))
	}
	for _, e := range s.Engines() {
		m.Engines = append(m.Engines, EngineMetrics{ID: e.id, Name: e.name, LiveTasks: e.live.Load(),
			ReductionLimit: e.cfg.Load().ReductionLimit})
	}
	return m
}
