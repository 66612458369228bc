package sched

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/jadevm/jade/internal/jtrace"
	"github.com/jadevm/jade/vmloop"
)

// Spawning: the host and bytecode entry points that make a task, and
// cancellation.

// ErrLimit is wrapped by errors for exhausted engine limits; the bus turns
// them into a catchable ResourceError for the requester.
var ErrLimit = errors.New("resource limit reached")

// ErrStopped is returned for spawns after the scheduler began stopping.
var ErrStopped = errors.New("scheduler is stopping")

// Launch makes a task from Prepare Runnable; from is as for Prepare.
func (c *Control) Launch(from *Task, t *Task) {
	s := c.s
	s.registry.add(from.worker(), t)
	if s.stopping.Load() {
		// Prepared before Shutdown set stopping; its cancel-all may have
		// passed this list already.
		t.flags.Or(flagCancel)
	}
	if !from.worker().stampSkip(t) {
		s.stampEnqueue(from.worker(), t, false)
	}
	if w := from.worker(); w != nil && w.tr != nil {
		if !w.tr.fold(t, from.id, w.inTask) {
			w.traceSpawn(t, from.id)
		}
	} else if w == nil && s.trace.on.Load() {
		s.hostTask(jtrace.KindSpawn, t, 0)
	}
	s.enqueue(from.worker(), t)
	if from == nil {
		s.hostLaunches.Add(-1) // registered: Shutdown's drain sees it now
	}
}

// Prepare makes a task without making it Runnable (Launch does): the caller can act
// on the task before anything else can see it (the bus gives it the
// descriptors among its arguments, so that they are closed before anyone
// sees it completed) and must then call Launch. A prepared task holds a
// place in its engine's liveTasks limit until it completes.
//
// A task prepared by the host (from == nil) is pinned: its record stays
// valid for as long as anything holds it. A task prepared by a task is
// not: its record is reused once it has completed and no heap object names
// it (Task.refs), so the caller must put the child's handle into a heap
// (the spawn's result) before Launch, and keep the pointer no longer than
// that handle lives (it is pinned when the handle is exported as a Value).
func (c *Control) Prepare(from *Task, e *Engine, p *vmloop.Program, fn int, args []vmloop.Value) (*Task, error) {
	return c.prepare(from, e, p, fn, args, nil)
}

// PrepareSpawn is Prepare for the spawn request that from (running on a
// worker) is stopped at: a task of from's engine running the requested
// function of from's program, with the request's arguments copied
// straight from from's registers (vmloop.Exec.ResetSpawn: no Values for
// scalar arguments). The rules of Prepare for a task prepared by a task
// apply, and the child's record counts from's reference to it already:
// the caller completes the request with vmloop.Exec.CompleteTask. A
// detached spawn (vmloop.SpawnDetached) makes no reference and counts
// none: once Launch has published the child, its record may end and be
// reused, so the caller must not touch it after Launch.
func (c *Control) PrepareSpawn(from *Task) (*Task, error) {
	return c.prepare(from, from.engine, nil, 0, nil, from.ex())
}

// prepare is Prepare (src nil) and PrepareSpawn (src the spawner's Exec).
func (c *Control) prepare(from *Task, e *Engine, p *vmloop.Program, fn int, args []vmloop.Value, src *vmloop.Exec) (*Task, error) {
	s := c.s
	if from == nil {
		// Counted before the stopping check, given back by Launch (or
		// below on failure): Shutdown waits for the count to drop after
		// it sets stopping, so a host spawn that passed the check is
		// registered before Shutdown's cancel pass and drain, and never
		// launched onto stopped workers (a spawn from a task needs no
		// count: its spawner stays registered until it has launched).
		s.hostLaunches.Add(1)
	}
	t, err := c.makeTask(from, e, p, fn, args, src)
	if err != nil && from == nil {
		s.hostLaunches.Add(-1)
	}
	return t, err
}

func (c *Control) makeTask(from *Task, e *Engine, p *vmloop.Program, fn int, args []vmloop.Value, src *vmloop.Exec) (*Task, error) {
	s := c.s
	if s.stopping.Load() {
		return nil, fmt.Errorf("sched: spawn: %w", ErrStopped)
	}
	cfg := e.cfg.Load()
	w := from.worker()
	var t *Task
	var err error
	if src != nil {
		var more bool
		if t = from.takeSpawn(); t != nil {
			more, err = t.x.SpawnMore(src)
		} else {
			t = w.newTask()
			t.id = w.newID(s)
			more, err = t.x.BeginSpawn(src, cfg.Limits.task(e.mem), uint32(t.id))
		}
		if more {
			from.keepSpawn(t)
			return nil, ErrSpawnMore
		}
	} else {
		t = w.newTask()
		t.id = w.newID(s)
		err = t.x.Reset(p, fn, args, cfg.Limits.task(e.mem), uint32(t.id))
	}
	if err != nil {
		err = fmt.Errorf("sched: spawn: %w", err)
	} else {
		// The limit is looked at once the arguments are taken: a bad
		// argument (a stale handle traps the spawner) is reported first,
		// as it is on every other path.
		err = e.reserveLive(w)
	}
	if err != nil {
		t.x.Recycle() // gives back the references its heap took
		t.recycle(w)  // never visible: nothing else names it
		return nil, err
	}
	if cfg.GoLoop {
		t.x.SetNative(false)
	}
	t.engine = e
	// Plain stores: nothing reaches t before Launch publishes it (the
	// record came from this worker's cache, or through the spares' lock
	// or taskPool, after its last reference went), and an atomic store
	// is a locked instruction (BenchmarkSpawnJoin).
	refs := (*int32)(unsafe.Pointer(&t.refs))
	if src != nil && !src.SpawnDetached() {
		// live (dropped by finish) and the spawner's reference, which
		// the bus makes uncounted (vmloop.Exec.CompleteTask)
		*refs = 2
	} else {
		// live: dropped by finish (a detached spawn makes no reference:
		// the record is reused as soon as the task ends)
		*refs = 1
	}
	if cfg.Metrics.TaskStats {
		initTaskStats(t) // before t is visible
	}
	if from == nil {
		t.flags.Or(flagPinned) // the host holds it
	}
	return t, nil
}

// Cancel requests cancellation of target (sticky, S-13). A waiting target
// is woken; a running one stops at its next safe point (its budget is
// zeroed); a runnable one completes Cancelled when dispatched.
func (c *Control) Cancel(from, target *Task) {
	if target.State() == Completed || target.flags.Or(flagCancel)&flagCancel != 0 {
		return
	}
	target.ex().Stop()
	if tok, ok := target.current(); ok {
		c.s.wakeAs(from.worker(), tok, phCancelled)
	}
}
