package sched

// Task names and per-task statistics. Both live in the task's rare part,
// so that a task without them costs nothing (the record is exactly its
// size class, TestRecordSizes): a name is set by the task itself
// (task.set_name), by a host spawn's option, or inherited from the
// spawner at spawn, as goroutine labels are; statistics are kept for the
// tasks of an engine whose MetricsConfig.TaskStats was set when they were
// spawned.

// initTaskMetrics gives t, made by makeTask and not yet visible, its
// spawner's name and, when stats is set, per-task statistics.
func initTaskMetrics(t, from *Task, stats bool) {
	var name *string
	if from != nil {
		if r := from.rare.Load(); r != nil {
			name = r.name.Load()
		}
	}
	if name == nil && !stats {
		return
	}
	r := &taskRare{} // no lock: nobody else can see t yet
	r.name.Store(name)
	t.rare.Store(r)
	if stats {
		t.flags.Or(flagStats)
	}
}

// Name returns the task's name, or "" when it has none.
func (t *Task) Name() string {
	if r := t.rare.Load(); r != nil {
		if n := r.name.Load(); n != nil {
			return *n
		}
	}
	return ""
}

// SetTaskName names t ("" removes the name). The tasks t spawns from now
// on inherit the name. Task names label CPU profiles (jprof), and show in
// the task dump, /debug/tasks and shutdown reports.
func (c *Control) SetTaskName(t *Task, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.rare.Load()
	if name == "" {
		if r != nil {
			r.name.Store(nil)
		}
		return
	}
	t.rareLocked().name.Store(&name)
}

// TaskStats are a task's statistics (MetricsConfig.TaskStats).
type TaskStats struct {
	// Slices: the times it was dispatched.
	Slices int64 `json:"slices"`
	// Reductions: reductions used, as of where its last slice ended.
	Reductions uint64 `json:"reductions"`
	// RunnableNs: nanoseconds it spent Runnable, waiting for a worker,
	// before those dispatches (to within 128 ns each; metrics_lat.go).
	RunnableNs int64 `json:"runnableNs"`
}

// Stats returns t's statistics, or nil when its engine did not keep them
// when it was spawned.
func (t *Task) Stats() *TaskStats {
	if !t.has(flagStats) {
		return nil
	}
	r := t.rare.Load()
	if r == nil {
		return nil
	}
	return &TaskStats{Slices: r.slices.Load(), Reductions: r.reductions.Load(), RunnableNs: r.runnable.Load()}
}
