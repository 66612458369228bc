package sched

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/jadevm/jade/internal/jtrace"
	"github.com/jadevm/jade/vmloop"
)

// The trace's hooks (trace.go says how they are kept cheap and safe):
// writing events in place, the names they refer to, the slow paths of
// every hook, long slices and calls, and Go's GC cycles.

// Writing an event: a hook takes its slot from x.take, inlined — the
// ring's fast path (jtrace's Ring.Take) when x writes to one ring only
// (solo) — or else from x.next, stores every field, and calls x.done
// when solo is nil.

// take returns x's next slot from the fast path of its one ring, or nil
// (then next): not cleared, so every field but Time and Flags must be
// stored.
func (x *workerTrace) take(now int64) *jtrace.Event {
	if r := x.solo; r != nil && now == 0 {
		return r.Take()
	}
	return nil
}

// setSolo sets solo after a ring of x is installed or taken away.
func (x *workerTrace) setSolo() {
	x.solo = nil
	if x.flight == nil || x.stream == nil {
		x.solo = x.flight
		if x.stream != nil {
			x.solo = x.stream
		}
	}
}

// next returns x's next event to fill in place, timed as jtrace's
// Ring.Next (now != 0: exact at now); done must follow once it is
// filled. The event goes to the flight ring, or to the stream ring when
// only a full trace runs.
func (x *workerTrace) next(now int64) *jtrace.Event { return x.ring().Next(now) }

// ring is the ring x's events are written to first: the flight ring, or
// the stream ring when only a full trace runs.
func (x *workerTrace) ring() *jtrace.Ring {
	if x.flight != nil {
		return x.flight
	}
	return x.stream
}

// done copies e, filled after next, to the stream ring when a full
// trace runs beside the flight recorder.
func (x *workerTrace) done(e *jtrace.Event) {
	if x.flight != nil && x.stream != nil {
		x.stream.Emit(*e)
	}
}

// emit writes e to x's rings.
func (x *workerTrace) emit(e jtrace.Event) {
	if x.flight != nil {
		x.flight.Emit(e)
	}
	if x.stream != nil {
		x.stream.Emit(e)
	}
}

// fn returns the name id of function fn of p: inlined while p is the
// cached program (fnSlow otherwise), as every hook that names a function
// is.
func (x *workerTrace) fn(p *vmloop.Program, fn int) uint32 {
	if p == x.prog && uint(fn) < uint(len(x.fns)) {
		return x.fns[fn]
	}
	return x.fnSlow(p, fn)
}

// fnSlow is fn when p is not the cached program or fn is out of range.
func (x *workerTrace) fnSlow(p *vmloop.Program, fn int) uint32 {
	if p != x.prog {
		x.prog, x.fns = p, x.s.progNames(p)
	}
	if fn < 0 || fn >= len(x.fns) {
		return 0
	}
	return x.fns[fn]
}

// progNames returns the name ids of p's functions (with their source
// lines: jtrace.Strings.Func).
func (s *Scheduler) progNames(p *vmloop.Program) []uint32 {
	st := &s.trace
	st.progMu.Lock()
	defer st.progMu.Unlock()
	if ids, ok := st.progs[p]; ok {
		return ids
	}
	ids := make([]uint32, 0)
	if p != nil {
		ids = make([]uint32, len(p.Funcs))
		for i := range p.Funcs {
			ids[i] = st.strs.Func(p.FuncName(i), funcLines(p, i))
		}
	}
	if st.progs == nil {
		st.progs = map[*vmloop.Program][]uint32{}
	}
	st.progs[p] = ids
	return ids
}

// funcLines maps the pcs of function fn of p to source lines for the
// trace's locations (frameOf: the mapping the task dump uses); nil when
// p has no line table for it.
func funcLines(p *vmloop.Program, fn int) jtrace.Lines {
	if len(p.Funcs[fn].Lines) == 0 {
		return nil
	}
	return func(pc int) (string, int) {
		f := frameOf(p, vmloop.ProfFrame{Fn: int32(fn), PC: int32(pc)})
		return f.File, f.Line
	}
}

// nameOf returns the name id of the task name in r, a task's rare
// fields (0: none; a task without rare fields has none either).
func (x *workerTrace) nameOf(r *taskRare) uint32 {
	n := r.name.Load()
	if n == nil {
		return 0
	}
	if n != x.nameP {
		x.nameP, x.name = n, x.s.trace.strs.ID(*n)
	}
	return x.name
}

// flowOf is the arrow value of t's current wait generation.
func flowOf(t *Task) uint32 { return uint32(t.wait.Load()>>phaseBits) + 1 }

// traceDispatch starts t's slice: the dispatch event, and the clock read
// of a long-slice check when t's engine sets one (lim).
func (w *worker) traceDispatch(t *Task, lim time.Duration) {
	var now int64
	if lim > 0 {
		now = nanotime()
		w.sliceT0, w.longLim = now, int64(lim)
	}
	x := w.tr
	if x == nil {
		return
	}
	fn, pc := t.ex().Loc()
	red := t.ex().Reductions()
	x.cur, x.dispFn, x.dispPC = t.id, x.fn(t.x.Program(), fn), int32(pc)
	x.red0, x.host0 = red, w.times.host.Load()
	var flow uint32
	if t.rs&rsResume != 0 || red == 0 {
		flow = flowOf(t) // after a wake, or the first dispatch (after the spawn)
	}
	var name uint32
	if r := t.rare.Load(); r != nil {
		name = x.nameOf(r)
	}
	e := x.take(now)
	if e == nil {
		e = x.next(now)
	}
	e.Kind, e.Task, e.Arg, e.Fn, e.PC, e.Flow, e.Reason = jtrace.KindDispatch, t.id, uint64(name), x.dispFn, x.dispPC, flow, 0
	if x.solo == nil {
		x.done(e)
	}
}

// traceEnd ends t's slice for reason why (jtrace.End*), while t is still
// w's: the slice-end event, and the long-slice check.
func (w *worker) traceEnd(t *Task, why uint8) {
	var now int64
	if w.sliceT0 != 0 {
		now = nanotime()
		if d := now - w.sliceT0; d > w.longLim {
			w.long(t, jtrace.LongSlice, d, w.longLim)
		}
		w.sliceT0 = 0
	}
	x := w.tr
	if x == nil {
		return
	}
	if now == 0 && (t.ex().Reductions()-x.red0 >= exactReductions || w.times.host.Load() != x.host0) {
		now = nanotime()
	}
	fn, pc := x.dispFn, x.dispPC
	if why != jtrace.EndComplete && why != jtrace.EndCancel {
		// Where it stopped (a completed task's frames are gone: it is
		// shown where its slice began).
		if f, p := t.ex().Loc(); f >= 0 {
			if why == jtrace.EndSuspend {
				p-- // at the request, not just past it (its line)
			}
			fn, pc = x.fn(t.x.Program(), f), int32(p)
		}
	}
	e := x.take(now)
	if e == nil {
		e = x.next(now)
	}
	// Arg and Flow: the spawn held for this slice's end (0: none).
	e.Kind, e.Task, e.Arg, e.Fn, e.PC, e.Flow, e.Reason = jtrace.KindSliceEnd, t.id, x.spawned, fn, pc, x.spawnFlow, why
	x.spawned, x.spawnFlow = 0, 0
	if x.solo == nil {
		x.done(e)
	}
}

// traceWake writes the wake of t by the task running on w (a join's
// completion, an event's signal), or by w between tasks (a timer, a
// completion: waker 0).
func (w *worker) traceWake(t *Task) {
	var by uint64
	if w.inTask {
		by = w.tr.cur
	}
	w.traceTask(jtrace.KindWake, t, by)
}

// traceSpawn writes the spawn of t by task by. A spawn by the slice
// running on w goes to w's lifo slot, which is never stolen: while t is
// there it cannot run before that slice ends, so its event waits to be
// folded into the slice-end event (KindSliceEnd's Arg and Flow). A
// second spawn in the same slice writes the one held first; a wake that
// takes the slot writes it too (unfold), since t then waits on the local
// queue, where another worker may steal it and run it before the slice
// ends.
func (w *worker) traceSpawn(t *Task, by uint64) {
	x := w.tr
	if !w.inTask || x.cur != by {
		w.traceTask(jtrace.KindSpawn, t, by)
		return
	}
	if x.spawned != 0 {
		e := x.next(0)
		e.Kind, e.Task, e.Arg, e.Flow = jtrace.KindSpawn, x.spawned, by, x.spawnFlow
		x.done(e)
	}
	x.spawned, x.spawnFlow = t.id, flowOf(t)
}

// unfold writes the spawn held for the running slice's end now, if it
// is the spawn of task id: the task left the lifo slot (enqueue) and may
// be stolen and dispatched elsewhere before the slice ends, and its
// spawn must precede that dispatch.
func (x *workerTrace) unfold(id uint64) {
	if x.spawned != id {
		return
	}
	e := x.next(0)
	e.Kind, e.Task, e.Arg, e.Flow = jtrace.KindSpawn, x.spawned, x.cur, x.spawnFlow
	x.done(e)
	x.spawned, x.spawnFlow = 0, 0
}

// fold is traceSpawn's common case, inlined into Launch: the first spawn
// by the slice running on w (inTask) is held for its end. It reports
// false, holding nothing, for any other spawn: traceSpawn must follow.
func (x *workerTrace) fold(t *Task, by uint64, inTask bool) bool {
	if !inTask || x.cur != by || x.spawned != 0 {
		return false
	}
	x.spawned, x.spawnFlow = t.id, flowOf(t)
	return true
}

// endReason is the slice-end reason of outcome o.
func endReason(o *Outcome) uint8 {
	if o.Kind == Cancelled {
		return jtrace.EndCancel
	}
	return jtrace.EndComplete
}

// traceTask writes event kind k of t (w's, or being made Runnable by w).
func (w *worker) traceTask(k jtrace.Kind, t *Task, arg uint64) {
	w.traceTaskAt(k, t, arg, 0)
}

// traceTaskAt is traceTask at time now (0: the ring's last clock read).
// A steal is written with the clock read: the thief may have searched
// for a long time since its last exact event, and the encoder would
// place the steal, and the stolen task's dispatch, just after that event,
// before the spawn or wake that queued the task on its other worker.
func (w *worker) traceTaskAt(k jtrace.Kind, t *Task, arg uint64, now int64) {
	x := w.tr
	e := x.next(now)
	e.Kind, e.Task, e.Arg = k, t.id, arg
	if k == jtrace.KindWake || k == jtrace.KindSpawn {
		e.Flow = flowOf(t)
	}
	x.done(e)
}

// traceAt writes event kind k at time now (a clock read the worker made
// anyway).
func (w *worker) traceAt(k jtrace.Kind, now int64, arg uint64) {
	x := w.tr
	e := x.next(now)
	e.Kind, e.Arg = k, arg
	x.done(e)
}

// hostTask writes event kind k of t on the host track (t is being made
// Runnable from outside the workers, and is not visible yet).
func (s *Scheduler) hostTask(k jtrace.Kind, t *Task, arg uint64) {
	s.hostEvent(jtrace.Event{Kind: k, Task: t.id, Arg: arg, Flow: flowOf(t)})
}

// LongRun is a slice, a non-blocking host call or a sampled run-queue
// wait that lasted longer than its engine's threshold
// (EngineRuntimeConfig.LongSlice, LongCall, LongWait).
type LongRun struct {
	Engine   string
	Task     uint64
	TaskName string
	Func     string // where the slice or call ended, or the wait began
	PC       int
	// File and Line are Func@PC's source position (Line 0: unknown).
	File string
	Line int
	// What is "slice", "host call" or "run-queue wait".
	What      string
	Duration  time.Duration
	Threshold time.Duration
	// Suppressed counts the long runs not reported since the last
	// report (one per second is).
	Suppressed uint64
}

// String is the report's log line: engine, task, file:line (function@pc
// without line information), duration.
func (r LongRun) String() string {
	name := ""
	if r.TaskName != "" {
		name = " " + strconv.Quote(r.TaskName)
	}
	verb := "ran"
	if r.What == jtrace.LongName(jtrace.LongWait) {
		verb = "took"
	}
	s := fmt.Sprintf("long %s: engine %s task %d%s at %s %s %v (threshold %v)", r.What, r.Engine, r.Task, name, loc(r.Func, r.PC, r.File, r.Line), verb, r.Duration, r.Threshold)
	if r.Suppressed > 0 {
		s += fmt.Sprintf("; %d more since the last report", r.Suppressed)
	}
	return s
}

// long counts a long slice, call or wait (what: jtrace.LongSlice,
// LongCall, LongWait) of t, which lasted d against threshold lim;
// records it, and reports it to Config.OnLong once per longWindow. t is
// still w's.
func (w *worker) long(t *Task, what uint8, d, lim int64) {
	e := t.engine
	switch what {
	case jtrace.LongCall:
		e.longCalls.Add(1)
	case jtrace.LongWait:
		e.longWaits.Add(1)
	default:
		e.longSlices.Add(1)
	}
	fn, pc := t.ex().Loc()
	if x := w.tr; x != nil {
		x.emit(jtrace.Event{Kind: jtrace.KindLong, Task: t.id, Arg: uint64(d), Reason: what, Fn: x.fn(t.x.Program(), fn), PC: int32(pc)})
	}
	s := w.s
	if s.onLong == nil {
		return
	}
	st := &s.trace
	now := nanotime()
	next := st.longNext.Load()
	if now < next || !st.longNext.CompareAndSwap(next, now+longWindow) {
		st.longSuppressed.Add(1)
		return
	}
	at := frameOf(t.x.Program(), vmloop.ProfFrame{Fn: int32(fn), PC: int32(pc)})
	s.onLong(LongRun{Engine: e.name, Task: t.id, TaskName: t.Name(), Func: at.Func, PC: pc, File: at.File, Line: at.Line, What: jtrace.LongName(what),
		Duration: time.Duration(d), Threshold: time.Duration(lim), Suppressed: st.longSuppressed.Swap(0)})
}

// watchGC records Go's GC cycles on the host track while tracing is on:
// a sentinel object's cleanup runs after each cycle that found it
// unreachable and arms the next. It runs on Go's cleanup goroutine only
// when Go collects (not on a timer), and stops once tracing is off.
// Called with trace.mu held, or before Start.
func (s *Scheduler) watchGC() {
	if s.trace.gcOn {
		return
	}
	s.trace.gcOn = true
	var stats debug.GCStats
	var arm func()
	arm = func() {
		sentinel := new([16]byte)
		runtime.AddCleanup(sentinel, func(struct{}) {
			st := &s.trace
			st.mu.Lock()
			defer st.mu.Unlock()
			if !st.on.Load() {
				st.gcOn = false
				return
			}
			debug.ReadGCStats(&stats)
			if len(stats.Pause) > 0 && st.host != nil {
				end := nanotime() - int64(time.Since(stats.PauseEnd[0]))
				st.host.emit(jtrace.Event{Kind: jtrace.KindGC, Time: end, Flags: jtrace.Exact, Task: uint64(stats.NumGC), Arg: uint64(stats.Pause[0])})
			}
			arm()
		}, struct{}{})
	}
	arm()
}
