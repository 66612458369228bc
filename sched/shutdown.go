package sched

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"time"

	"github.com/jadevm/jade/internal/asymfence"
)

// Graceful drain, forced shutdown and the reports of live tasks.

// Drain waits until every task has completed (graceful shutdown), or ctx
// ends. New spawns are still accepted while draining.
func (c *Control) Drain(ctx context.Context) error {
	s := c.s
	s.mu.Lock()
	s.draining.Store(true) // before the look: see finish
	// A worker counts a task's end with a release store, then loads
	// draining: the barrier makes this count see that end, or that load
	// see draining (registry.go).
	asymfence.Heavy()
	if s.registry.count() == 0 {
		s.endDrainLocked() // other waiters too (finish ends it first)
		s.mu.Unlock()
		return nil
	}
	if s.zeroCh == nil {
		s.zeroCh = make(chan struct{})
	}
	ch := s.zeroCh
	s.drainers++
	s.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		if s.zeroCh == ch {
			if s.drainers--; s.drainers == 0 {
				s.endDrainLocked() // the last waiter left: finishes stop looking
			}
		}
		s.mu.Unlock()
		return fmt.Errorf("sched: drain: %d tasks still live: %w", s.LiveTasks(), ctx.Err())
	}
}

// endDrainLocked ends the current drain wait (s.mu held): its waiters, if
// any, return, and completions stop looking for the last task.
func (s *Scheduler) endDrainLocked() {
	if s.zeroCh != nil {
		close(s.zeroCh)
		s.zeroCh = nil
	}
	s.drainers = 0
	s.draining.Store(false)
}

// TaskReport describes a live task (introspection, forced shutdown).
type TaskReport struct {
	ID     uint64
	Engine string
	State  State
	Func   string
	PC     int
	// Name is the task's name, "" when it has none (Task.Name).
	Name string `json:",omitempty"`
	// Stats are its statistics, nil unless its engine kept them
	// (MetricsConfig.TaskStats) when it was spawned.
	Stats *TaskStats `json:",omitempty"`
	// Stack is its Jade stack, innermost first (TasksWithStacks only).
	Stack []Frame `json:",omitempty"`
	// File and Line are the source position of Func@PC (Line 0: the
	// program has no line table); report_wait.go.
	File string `json:",omitempty"`
	Line int    `json:",omitempty"`
	// Wait says what a Waiting task waits for; nil for other states.
	Wait *Wait `json:",omitempty"`
}

func (r TaskReport) String() string { return r.describe() }

// Tasks lists the live tasks, by id. A running task reports the location
// it published at its last safe point.
func (s *Scheduler) Tasks() []TaskReport {
	var out []TaskReport
	s.registry.each(func(t *Task) {
		out = append(out, s.report(t, false, nil))
	})
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Shutdown stops the scheduler. It refuses new spawns, cancels every live
// task and waits until they complete or ctx ends; then it stops the
// workers, and waits for them until ctx ends: each first cancels what is
// still in flight on its backend and reaps it (at most ioStopGrace), so
// that a descriptor whose close was left to an operation's completion is
// closed before its backend goes (stopIO). Tasks still live at the deadline (a host intrinsic that never
// returns, say) are reported and abandoned untouched: the spec forbids
// interrupting VM or FFI code; completed tasks are never among them
// (SummarizeReports describes a long list in bounded space). Descriptors
// still in transit (DetachFD) are closed once the tasks have ended.
// Callers wanting a graceful stop call Drain first. A host spawn that passed its stopping check before Shutdown began
// is waited for and cancelled like the rest; if ctx has already ended,
// such a spawn may be left registered and never run (it is among the
// tasks Drain and LiveTasks still count).
func (c *Control) Shutdown(ctx context.Context) []TaskReport {
	s := c.s
	s.stopping.Store(true)
	// Host spawns that passed the stopping check register before the
	// cancel pass (see prepare); the window is a few microseconds.
	for s.hostLaunches.Load() != 0 && ctx.Err() == nil {
		time.Sleep(10 * time.Microsecond)
	}
	s.registry.each(func(t *Task) { c.Cancel(nil, t) })
	var stuck []TaskReport
	if err := c.Drain(ctx); err != nil {
		// A task still registered may have completed by now: it is not
		// stuck, so it is not reported.
		stuck = slices.DeleteFunc(s.Tasks(), func(r TaskReport) bool { return r.State == Completed })
	}
	// No task is left to receive a descriptor still in transit (a message
	// never received): close it while the backends still run.
	s.closeTransit()
	// Stop the workers; a worker stuck inside a task is abandoned.
	s.mu.Lock()
	started := s.started
	s.mu.Unlock()
	if !started {
		return stuck
	}
	done := make(chan struct{})
	s.pauseMu.Lock() // no stop of the world from now on: w.stop means stop
	s.halted = true
	s.workersDone = done
	s.pause.Store(nil)
	for _, w := range s.workers {
		w.stop.Store(true)
		w.unpark()
	}
	s.pauseMu.Unlock()
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		s.dropRecordSlots()
	case <-ctx.Done():
	}
	// Give back the GOMAXPROCS raise unless someone changed it since.
	s.mu.Lock()
	if s.setProcs != 0 && runtime.GOMAXPROCS(0) == s.setProcs {
		runtime.GOMAXPROCS(s.savedProcs)
	}
	s.setProcs = 0
	s.mu.Unlock()
	return stuck
}

// dropRecordSlots gives the task reference slots that the recycled
// records' Execs keep spare back to vmloop's table (the workers have
// stopped: their caches are nobody's now), so that a scheduler that ends
// leaves none taken.
func (s *Scheduler) dropRecordSlots() {
	for _, w := range s.workers {
		for _, t := range w.tasks {
			t.x.DropTaskRefSlots()
		}
	}
	s.spares.mu.Lock()
	for _, t := range s.spares.list {
		t.x.DropTaskRefSlots()
	}
	s.spares.done = true
	s.spares.mu.Unlock()
}
