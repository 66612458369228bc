package sched

// Task names and per-task statistics. Both live in the task's rare part,
// so that a task without them costs nothing (the record is exactly its
// size class, TestRecordSizes): a name is set by the task itself
// (task.set_name) or by a host spawn's option, and is the task's own: a
// child does not inherit its spawner's (after SpawnNamed("acceptor"),
// the connection tasks it spawns are not all "acceptor"; the runtime has
// no task labels that a child would inherit instead). Statistics are
// kept for the tasks of an engine whose MetricsConfig.TaskStats was set
// when they were spawned.

// initTaskStats gives t, made by makeTask and not yet visible, per-task
// statistics.
func initTaskStats(t *Task) {
	t.rare.Store(&taskRare{}) // no lock: nobody else can see t yet
	t.flags.Or(flagStats)
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

// SetTaskName names t ("" removes the name); the tasks t spawns do not
// inherit it. Task names label CPU profiles (jprof), and show in the task
// dump, /debug/tasks and shutdown reports.
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
