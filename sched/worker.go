package sched

import (
	"runtime"
	"sync/atomic"

	"github.com/jadevm/jade/vmloop"
)

// worker is one scheduler thread: a goroutine locked to its OS thread that
// runs tasks by calling their VM loop and switches tasks by returning.
type worker struct {
	s  *Scheduler
	id int

	local localQueue // owner-only run queue

	// wakeCh carries one unpark token; a send never blocks and a token
	// sent before the worker blocks is kept, so an unpark is never lost.
	wakeCh chan struct{}
	parked bool // guarded by s.idleMu
	stop   atomic.Bool

	// injectFirst makes the next pick look at the inject queue before the
	// local queue: set after a preempted or yielded slice, so a task woken
	// from outside waits at most about one slice.
	injectFirst bool
	ticks       uint32

	// Counters (read racily by metrics; written only by this worker).
	dispatches atomic.Uint64
	parks      atomic.Uint64
}

func (w *worker) loop() {
	defer w.s.wg.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for {
		t := w.next()
		if t == nil {
			return
		}
		w.run(t)
	}
}

// next finds the next task in the reference order of spec §1.1: local run
// queue, global inject queue, (stealing: M:N issue), park. It returns nil
// when the worker must stop.
func (w *worker) next() *Task {
	s := w.s
	for {
		if w.stop.Load() {
			return nil
		}
		w.ticks++
		if w.injectFirst || w.ticks%32 == 0 {
			w.injectFirst = false
			if t := s.inject.pop(); t != nil {
				return t
			}
		}
		if t := w.local.pop(); t != nil {
			return t
		}
		if t := s.inject.pop(); t != nil {
			return t
		}
		// Park: register as idle, look once more, then block. A producer
		// pushes before it looks for an idle worker, so either we see its
		// task here or it sees us and sends a token.
		s.idleMu.Lock()
		w.parked = true
		s.idle = append(s.idle, w)
		s.idleMu.Unlock()
		if s.inject.len() > 0 || w.stop.Load() {
			w.unidle()
			continue
		}
		w.parks.Add(1)
		<-w.wakeCh
		w.unidle()
	}
}

// unidle removes w from the idle list if a notifier has not done so.
func (w *worker) unidle() {
	s := w.s
	s.idleMu.Lock()
	if w.parked {
		for i, x := range s.idle {
			if x == w {
				s.idle = append(s.idle[:i], s.idle[i+1:]...)
				break
			}
		}
		w.parked = false
	}
	s.idleMu.Unlock()
}

// run gives t one slice: up to its engine's reduction limit.
func (w *worker) run(t *Task) {
	s := w.s
	w.dispatches.Add(1)
	t.transition(Runnable, Running)
	t.w = w // cleared before t becomes visible to other workers
	ex := t.exec
	if t.cancel.Load() {
		s.finish(w, t, Outcome{Kind: Cancelled})
		return
	}
	budget := t.engine.cfg.Load().ReductionLimit
	if t.resume {
		t.resume = false
		t.disarm()
		if !w.act(t, s.disp.Resume(t, ex.Request()), &budget) {
			return
		}
	}
	for {
		sig := ex.Run(budget)
		budget = ex.Left()
		switch sig {
		case vmloop.SigCompleted:
			w.publish(t)
			s.finish(w, t, Outcome{Kind: Success, Value: ex.Result()})
			return
		case vmloop.SigThrown:
			w.publish(t)
			s.finish(w, t, Outcome{Kind: Failure, Value: ex.Thrown()})
			return
		case vmloop.SigTrap:
			w.publish(t)
			s.finish(w, t, Outcome{Kind: Trapped, Trap: ex.Trap()})
			return
		case vmloop.SigPreempted:
			w.publish(t)
			if t.cancel.Load() {
				s.finish(w, t, Outcome{Kind: Cancelled})
				return
			}
			ex.ClearStop()
			w.requeue(t)
			return
		case vmloop.SigIntrinsic:
			if !w.act(t, s.disp.Intrinsic(t, ex.Request()), &budget) {
				return
			}
		}
	}
}

// act carries out a dispatcher action; it returns true when the worker
// keeps running t.
func (w *worker) act(t *Task, a Action, budget *int64) bool {
	s := w.s
	ex := t.exec
	switch a {
	case ActContinue:
		// An intrinsic is a safe point: the budget and cancellation are
		// looked at here.
		if t.cancel.Load() {
			w.publish(t)
			s.finish(w, t, Outcome{Kind: Cancelled})
			return false
		}
		if *budget <= 0 {
			w.publish(t)
			w.requeue(t)
			return false
		}
		return true
	case ActYield:
		w.publish(t)
		if t.cancel.Load() {
			s.finish(w, t, Outcome{Kind: Cancelled})
			return false
		}
		w.requeue(t)
		return false
	case ActSuspend:
		w.publish(t)
		if t.cancel.Load() {
			// Suspension points observe cancellation. The armed wait is
			// abandoned: its token becomes stale at the next arm.
			t.disarm()
			s.finish(w, t, Outcome{Kind: Cancelled})
			return false
		}
		t.resume = true
		t.w = nil
		s.waiting.Add(1)
		if !t.park() {
			// Woken before it parked: it is Runnable again.
			s.waiting.Add(-1)
			w.local.push(t, &s.inject)
		}
		return false
	case ActThrown:
		w.publish(t)
		s.finish(w, t, Outcome{Kind: Failure, Value: ex.Thrown()})
		return false
	default: // ActTrap
		w.publish(t)
		s.finish(w, t, Outcome{Kind: Trapped, Trap: ex.Trap()})
		return false
	}
}

// requeue puts a preempted or yielding task behind the others (S-6).
func (w *worker) requeue(t *Task) {
	t.w = nil
	t.transition(Running, Runnable)
	w.local.push(t, &w.s.inject)
	w.injectFirst = true
}

// publish records where t stopped, for introspection.
func (w *worker) publish(t *Task) {
	fn, pc := t.exec.Loc()
	t.where.Store(uint64(fn)<<32 | uint64(uint32(pc)))
}
