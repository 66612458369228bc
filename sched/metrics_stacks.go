package sched

import (
	"errors"
	"fmt"
	"sort"
	"sync/atomic"
	"time"

	"github.com/jadevm/jade/vmloop"
)

// Task stacks for the task dump. A task's Jade stack lives in its Exec,
// which only the worker running the task may read (a waker can make a
// parked task Runnable and a worker run it at any moment). So the dump
// stops the world, as Go's goroutine dump does: every worker stops at its
// next pick (the running slices are ended at their next safe point, as a
// kick ends one; parked workers are woken), and waits at a barrier while
// the dump reads the stacks of the registered tasks. Nothing runs a task
// meanwhile; wakes, completions and spawns from outside only enqueue.
// The workers stop through w.stop, which next loads before every pick
// anyway: no cost outside a dump.

// pauseState is one stop of the world.
type pauseState struct {
	arrived atomic.Int32
	all     chan struct{} // closed when every worker has arrived
	release chan struct{} // closed to let the workers go on
	n       int32
}

// paused holds w at the barrier of the pause in progress and reports
// true, or reports false when w.stop means Shutdown (no pause installed).
func (w *worker) paused() bool {
	ps := w.s.pause.Load()
	if ps == nil {
		return false
	}
	if ps.arrived.Add(1) == ps.n {
		close(ps.all)
	}
	<-ps.release
	return true
}

// ErrPauseTimeout is returned when a worker did not reach the barrier in
// time (a host call or a loop without safe points holding it).
var ErrPauseTimeout = errors.New("sched: stop the world: a worker did not stop in time")

// stopWorld stops every worker and runs f while they wait, at most
// waiting timeout for them to stop. It fails before Start, after
// Shutdown began stopping the workers, and on timeout (f does not run).
func (s *Scheduler) stopWorld(timeout time.Duration, f func()) error {
	s.pauseMu.Lock()
	defer s.pauseMu.Unlock()
	s.mu.Lock()
	started := s.started
	s.mu.Unlock()
	if !started || s.halted {
		return errors.New("sched: stop the world: workers not running")
	}
	ps := &pauseState{all: make(chan struct{}), release: make(chan struct{}), n: int32(len(s.workers))}
	s.pause.Store(ps)
	for _, w := range s.workers {
		w.stop.Store(true) // before the stop and the wake: they see it
		if ex := w.curEx(); ex != nil {
			ex.Stop()
		}
		w.unpark()
	}
	var err error
	select {
	case <-ps.all:
		f()
	case <-time.After(timeout):
		err = ErrPauseTimeout
	}
	// The pause stays installed, released: a worker arriving late passes
	// the barrier at once (Shutdown removes it before it stops workers).
	for _, w := range s.workers {
		w.stop.Store(false)
	}
	close(ps.release)
	return err
}

// Frame is one frame of a task's Jade stack.
type Frame struct {
	Func string `json:"func"`
	PC   int    `json:"pc"`
	File string `json:"file"`
	Line int    `json:"line"` // 0 when the program has no line table
}

func (f Frame) String() string {
	return fmt.Sprintf("%s@%d (%s:%d)", vmloop.QuoteName(f.Func), f.PC, f.File, f.Line)
}

// TasksWithStacks is Tasks with each task's Jade stack, innermost frame
// first (TaskReport.Stack), and all that is known of what each Waiting
// task waits for (TaskReport.Wait: the joined task, the event, the
// socket's addresses, the deadline). It stops the world while it reads the stacks
// (see above), waiting at most timeout for the workers to stop: every
// running slice loses the rest of its budget, as at a kick. Called from a
// worker (a host intrinsic) it fails with ErrPauseTimeout, since that
// worker cannot stop while it waits.
func (s *Scheduler) TasksWithStacks(timeout time.Duration) ([]TaskReport, error) {
	var out []TaskReport
	var buf []vmloop.ProfFrame
	err := s.stopWorld(timeout, func() {
		s.registry.each(func(t *Task) { out = append(out, s.report(t, true, &buf)) })
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// frameOf names fr of program p.
func frameOf(p *vmloop.Program, fr vmloop.ProfFrame) Frame {
	f := Frame{Func: p.FuncName(int(fr.Fn)), PC: int(fr.PC), File: p.FuncFile(int(fr.Fn))}
	if f.File == "" {
		f.File = "<unknown>.jasm"
	}
	if int(fr.Fn) < len(p.Funcs) {
		f.Line = p.Funcs[fr.Fn].Line(int(fr.PC))
	}
	return f
}
