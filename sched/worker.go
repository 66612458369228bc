package sched

import (
	"math/rand/v2"
	"runtime"
	"runtime/pprof"
	"sync/atomic"

	"github.com/jadevm/jade/vmloop"
)

// injectEvery is the reductions a worker runs between two looks at the
// inject queue at most: one default slice.
const injectEvery = DefaultReductionLimit

// lifoPicksPerSlice bounds the tasks a chain through the lifo slot runs on
// one slice: each pick from the slot costs limit/lifoPicksPerSlice
// reductions (lifoCost) — about what a dispatch costs next to a reduction
// at the default limit — so a chain of tasks that run few or no
// reductions (ping-pong, re-thrown joins) still yields to the queue after
// about one slice.
const lifoPicksPerSlice = 64

// lifoCost is the reductions a pick from the lifo slot costs under limit.
func lifoCost(limit int64) int64 { return max(limit/lifoPicksPerSlice, 1) }

// spawnCost is the reductions a spawn costs its spawner under limit: the
// same share of a slice as a pick from the lifo slot (a spawn is a
// dispatch's worth of work, not one reduction). A task fanning out is thus
// preempted after about lifoPicksPerSlice spawns, and the children queued
// so far run while their records are still in this core's cache — a
// fan-out of 10k tasks on one worker went 0.9 → 0.55-0.7 µs per task —
// and the spawner's slice bounds its queue's wait as any slice does (S-6).
func spawnCost(limit int64) int64 { return lifoCost(limit) }

// intrCost is the reductions every other intrinsic costs beside its
// instruction's one: the round trip from the VM loop through the worker
// and the dispatcher and back takes about as long as that many simple
// instructions (a loop calling time.now ran ~40 ns a reduction uncharged,
// a loop of adds ~3 ns), so a slice of intrinsic calls lasts about as long
// as a slice of plain bytecode, which S-6's bound counts in. Measured by
// BenchmarkSliceTimeIntrinsics.
const intrCost = 32

// ioPollEvery is how many dispatches a busy worker with I/O in flight runs
// between two polls of its backend.
const ioPollEvery = 16

// goYieldEvery is the least time between two yieldGo hand-overs: below
// sysmon's 10 ms long-running threshold (forcePreemptNS in Go's runtime)
// by more than the 64 picks between two checks of a busy worker (about
// 1.4 ms of default slices), so that sysmon sees the worker's P change
// between two of its looks, and not lower, because each hand-over costs
// the worker 10-70 µs on this VM.
const goYieldEvery = 8_000_000 // ns

// execPoolSize bounds a worker's pool of recycled Execs.
const execPoolSize = 256

// worker is one scheduler thread: a goroutine locked to its OS thread that
// runs tasks by calling their VM loop and switches tasks by returning.
type worker struct {
	s  *Scheduler
	id int
	// tid is the OS thread id of the worker's locked thread (Linux; 0
	// elsewhere or before the worker started).
	tid atomic.Int64

	local localQueue // lock-free ring: owner push/pop, thieves steal half

	// lifo is the LIFO slot (Go's runnext, Tokio's lifo_slot): a task
	// spawned or woken by the task running here goes into it and runs next
	// on this worker, on the budget its waker's slice has left (sliceLeft),
	// so a spawn/join or ping-pong chain stays on one warm core without
	// waking another worker. It is never stolen: it runs within one slice
	// or goes to the tail of the local queue, which keeps S-6 (a chain
	// shares one slice; the queue waits at most about one slice). Written
	// only by the owner; atomic for metrics.
	lifo atomic.Pointer[Task]
	// sliceLeft is the budget the last slice left (owner only): what a
	// task taken from the lifo slot may run on.
	sliceLeft int64
	// inherit is the budget the task being picked inherits from the lifo
	// slot (sliceLeft less lifoCost), or 0 when it was picked elsewhere
	// (owner only).
	inherit int64
	// inTask is true while a task's slice runs on this worker (owner
	// only): spawns and wakes made by it go to the lifo slot.
	inTask bool
	// reaping is true while pollIO wakes the tasks of the completions it
	// reaped (owner only): those wakes go to the local queue without a
	// notify each, and the reap's caller notifies once (shareBacklog).
	// In its park a worker is still on s.idle while it reaps, so a
	// notify per wake picked the worker itself (a Wake system call to its
	// own backend) or woke another to find nothing: the reaper runs the
	// first of those tasks itself.
	reaping bool
	// cur is the Exec of the task whose slice runs here or ran last
	// (written by the owner at dispatch, not cleared after: one locked
	// store per dispatch, not two; read by kickOne, which may Stop it). A
	// Stop that lands after the slice ended is cleared when that Exec next
	// runs (slice) or is reused (Reset); the kick is then answered by the
	// worker's next pick, which looks at the inject queue while a kick is
	// outstanding.
	cur atomic.Pointer[vmloop.Exec]
	// sampleReq is a CPU sample request (profile.go): the dispatch count
	// when it was made, plus one; 0 when none. Written by RequestSamples
	// only while a sampler is installed; the owner loads it where a slice
	// ends.
	sampleReq atomic.Uint64
	// stack is the buffer of the owner's samples (profile.go).
	stack []vmloop.ProfFrame
	// latLeft counts down the enqueues to the next timestamped one
	// (owner only; metrics_lat.go).
	latLeft int32
	// times is where the worker's wall time went (metrics_worker.go).
	times workerTimes
	// inGo is true while yieldGo has the worker's goroutine in Go's
	// scheduler (owner writes, kickOne reads): a kick goes to another
	// worker then.
	inGo atomic.Bool

	park   parker // futex on Linux, one-slot channel elsewhere
	parked bool   // on s.idle; guarded by s.idleMu
	// notified: a notifier took w off s.idle and counted it as searching
	// (s.nSearching) on its behalf; guarded by s.idleMu.
	notified bool
	stop     atomic.Bool

	// searching: this worker counts in s.nSearching (owner-only).
	searching bool
	// cpu is the CPU the worker pins its thread to, or -1.
	cpu int

	// injectFirst makes the next pick look at the inject queue before the
	// local queue: set after a preempted or yielded slice, so a task woken
	// from outside waits at most about one slice.
	injectFirst bool
	ticks       uint32
	// spent counts the reductions run since the inject queue was last
	// looked at (owner only).
	spent int64

	// idNext..idEnd-1 are task ids taken from s.nextTask in a block and
	// not yet given to a spawn (owner only; newID).
	idNext, idEnd uint64

	// execs are recycled Execs of tasks completed on this worker, reused by
	// spawns from tasks running here (owner only).
	execs []*vmloop.Exec

	// timers is the worker's shard of every engine's timer wheel (owner
	// only; timers.go).
	timers workerTimers

	// io is the worker's completion backend, set on the worker's thread
	// when it starts (nil without one: ioErr says why); read by notifiers
	// to wake the worker, hence atomic.
	io    atomic.Pointer[workerIO]
	ioErr string

	// Counters (read racily by metrics; written only by this worker).
	labelled   *Engine // engine whose pprof labels the goroutine carries
	lastYield  int64   // nanotime of the last yieldGo hand-over
	dispatches atomic.Uint64
	parks      atomic.Uint64
	goYields   atomic.Uint64
	parkYields atomic.Uint64 // the goYields made on the way into a park (tests)
	steals     atomic.Uint64
}

func (w *worker) loop() {
	defer w.s.wg.Done()
	runtime.LockOSThread()
	// A pinned thread must not go back to Go's thread pool: returning from
	// the goroutine while still locked makes the runtime end the thread.
	if pinned := w.cpu >= 0 && pinThread(w.cpu) == nil; !pinned {
		defer runtime.UnlockOSThread()
	}
	w.tid.Store(int64(threadID()))
	w.times.start.Store(nanotime())
	tightTimers()
	if open := w.s.openIO; open != nil {
		// On the locked thread: an owner-thread ring belongs to it.
		if b, err := open(w.id); err != nil {
			w.ioErr = err.Error()
		} else {
			w.io.Store(newWorkerIO(b))
			defer b.Close() // before the thread is unlocked or ends
		}
	}
	for {
		t := w.next()
		if t == nil {
			return
		}
		w.run(t)
	}
}

// unpark wakes w from its park: its backend's Wait, or its futex.
func (w *worker) unpark() {
	if x := w.io.Load(); x != nil {
		x.b.Wake()
		return
	}
	w.park.unpark()
}

// WorkerThreads returns the OS thread ids of the started workers (Linux;
// zeros elsewhere), for per-thread measurements such as context switches.
func (s *Scheduler) WorkerThreads() []int {
	ids := make([]int, len(s.workers))
	for i, w := range s.workers {
		ids[i] = int(w.tid.Load())
	}
	return ids
}

// next finds the next task in the reference order of spec §1.1: local run
// queue, global inject queue, stealing from a random victim, park. It
// returns nil when the worker must stop.
func (w *worker) next() *Task {
	for {
		if w.stop.Load() {
			if w.paused() { // a stop of the world, not Shutdown
				continue
			}
			return nil
		}
		if t := w.find(); t != nil {
			if w.searching {
				w.endSearch()
			}
			return t
		}
		w.sleep()
	}
}

// find looks local → inject → steal without blocking.
func (w *worker) find() (t *Task) {
	s := w.s
	if w.due() {
		// Slice boundary: due timers wake their tasks onto the local queue
		// even while every worker is busy.
		w.fire()
	}
	w.ticks++
	slot := w.lifo.Load()
	x := w.io.Load()
	deferred := false // a dry poll left queued SQEs to the parking Wait
	if x != nil && x.n > 0 && (w.ticks%ioPollEvery == 0 || w.local.len() == 0 && slot == nil) {
		// And so do ready completions — when the local queue runs dry, or
		// every ioPollEvery dispatches: the SQEs of the tasks run in
		// between go to the kernel in one enter, not one each. When the
		// queue ran dry and nothing is ready to reap, the poll would only
		// submit: the worker's park (its backend's Wait) submits and
		// blocks in one enter instead — a read armed by a task and the
		// wait for it cost one syscall, not two (echo_proc_1 measures
		// it) — unless the worker finds a task first (flushed below).
		if w.ticks%ioPollEvery != 0 && x.ready != nil && !x.ready() {
			deferred = true
		} else if w.pollBusy(x) > 0 {
			w.shareBacklog()
		}
	}
	if deferred {
		defer func() {
			if t != nil && w.pollBusy(x) > 0 { // not parking: submit before running t
				w.shareBacklog()
			}
		}()
	}
	if w.injectFirst || w.spent >= injectEvery || w.ticks%32 == 0 || s.kick.Load() {
		// The inject queue holds outside wakes and the older half of
		// overflowed rings: take its share now (FIFO) so that it is
		// drained as fast as it fills. Besides after every preempted or
		// yielding slice and every 32 picks, it is looked at once the
		// worker has spent a slice's worth of reductions since the last
		// look (a time basis without a clock read): an outside wake waits
		// about one slice even behind many short dispatches.
		w.injectFirst = false
		w.spent = 0
		if w.ticks%64 == 0 {
			// A busy worker too (one clock read per 64 picks), before the
			// look: what came meanwhile is seen now.
			w.yieldGo()
		}
		if t := w.takeInject(); t != nil {
			return t
		}
	}
	if slot != nil {
		w.lifo.Store(nil)
		// A pick from the slot costs lifoCost, so that a chain shares one
		// slice even when its tasks run few or no reductions.
		if c := lifoCost(slot.engine.cfg.Load().ReductionLimit); w.sliceLeft > c {
			w.inherit = w.sliceLeft - c
			w.spent += c
			return slot
		}
		// Its chain used up the slice: behind the others (S-6).
		w.local.push(slot, &s.inject)
		w.injectFirst = true
	}
	if t := w.local.pop(); t != nil {
		return t
	}
	if t := w.takeInject(); t != nil {
		return t
	}
	if len(s.workers) > 1 && w.beginSearch() {
		if t := w.steal(); t != nil {
			w.steals.Add(1)
			return t
		}
		// The global queue once more: a producer that saw us searching did
		// not wake anyone.
		if t := s.inject.pop(); t != nil {
			s.answerKick()
			return t
		}
	}
	return nil
}

// takeInject takes a share of the inject queue — its length split over the
// workers, at most what fits in half of the local ring — in one lock: the
// first to run now, the rest onto the local queue.
func (w *worker) takeInject() *Task {
	s := w.s
	n := s.inject.len()
	if n == 0 {
		return nil
	}
	share := min(int(n)/len(s.workers)+1, localCap/2-w.local.len())
	share = max(share, 1)
	t := s.inject.popBatch(&w.local, share)
	if t != nil {
		// After the take, not before: a kick set between a look and the
		// take would otherwise stay outstanding with the task gone (kickOne
		// withdraws one that finds the queue empty).
		s.answerKick()
		if share > 1 && len(s.workers) > 1 {
			s.notify() // others may steal part of the batch
		}
	}
	return t
}

// answerKick clears an outstanding kick (kickOne) once a worker has taken
// from the inject queue, so that the next outside wake may kick again.
func (s *Scheduler) answerKick() {
	if s.kick.Load() {
		s.kick.Store(false)
	}
}

// beginSearch enters the searching state unless half of the workers
// already search (Tokio's idle.rs rule: 2·searching < workers).
func (w *worker) beginSearch() bool {
	if w.searching {
		return true
	}
	s := w.s
	for {
		n := s.nSearching.Load()
		if 2*int(n) >= len(s.workers) {
			return false
		}
		if s.nSearching.CompareAndSwap(n, n+1) {
			w.searching = true
			w.searchBegin()
			return true
		}
	}
}

// endSearch leaves the searching state after finding work; the last
// searcher wakes another parked worker, which then searches in its place
// (there may be more work than this worker can take).
func (w *worker) endSearch() {
	w.searching = false
	w.searchEnd()
	if w.s.nSearching.Add(-1) == 0 {
		w.s.notify()
	}
}

// steal takes half of a random victim's local queue, trying every other
// worker once starting at the random one.
func (w *worker) steal() *Task {
	ws := w.s.workers
	n := len(ws)
	start := rand.IntN(n)
	for i := 0; i < n; i++ {
		v := ws[(start+i)%n]
		if v == w {
			continue
		}
		if t := v.local.stealInto(&w.local); t != nil {
			return t
		}
	}
	return nil
}

// sleep parks the worker. Protocol (no unpark is lost): register as idle,
// leave the searching state, look once more, then block. A producer pushes
// before it loads s.nSearching and s.nIdle, so either we see its task here
// or it sees us (idle, or still searching — then the last searcher, which
// re-checks every queue here, sees the task).
func (w *worker) sleep() {
	s := w.s
	if w.timers.next != noDeadline {
		// Exact deadline (remote cancels drained); a due timer is work.
		if w.fire(); w.local.len() > 0 {
			return
		}
	}
	s.idleMu.Lock()
	w.parked = true
	s.idle = append(s.idle, w)
	s.nIdle.Add(1)
	s.idleMu.Unlock()
	last := false
	if w.searching {
		w.searching = false
		w.searchEnd()
		last = s.nSearching.Add(-1) == 0
	}
	if s.inject.len() > 0 || w.stop.Load() || (last && s.localWork()) {
		w.unidle()
		return
	}
	w.parks.Add(1)
	if w.yieldGo() {
		w.parkYields.Add(1)
	}
	if x := w.io.Load(); x != nil {
		w.parkBegin()
		n := w.pollIO(x, w.parkTimeout())
		w.parkEnd()
		w.unidle()
		if n > 0 {
			w.shareBacklog() // off s.idle now: it cannot pick itself
		}
		return
	}
	w.parkBegin()
	w.park.park(w.parkTimeout())
	w.parkEnd()
	w.unidle()
}

// shareBacklog wakes a parked worker after a reap (pollIO) left more than
// one task on w's local queue: w runs the next one itself, and another
// worker may steal the rest. A single completion wakes nobody.
func (w *worker) shareBacklog() {
	if len(w.s.workers) > 1 && w.local.len() > 1 {
		w.s.notify()
	}
}

// yieldGo hands the worker's goroutine to Go's scheduler (runtime.Gosched)
// when it has not done so for goYieldEvery, and reports whether it did. It
// runs on the way into a park (the worker has nothing to do then) and, for
// a worker that never parks, every 64 picks (find).
//
// Why: a locked worker never goes through Go's scheduler, so its P's
// schedtick stands still. Go's sysmon takes that for a goroutine running
// for more than 10 ms and, every 10 ms, either preempts it (a signal and a
// hand-over of the locked thread) or, when it catches the worker blocked
// in its park's system call, takes the P away and starts another thread
// for it; each time it also drops back to polling every 20 µs. Measured
// under redis-benchmark (resp_ping, --workers 1, 40 % of a CPU): sysmon
// made ~2,000 sleeps and ~2,200 context switches a second, and the
// server's CPU per request fell 7 % once the worker yields here (a
// yield costs one such hand-over, but at most every goYieldEvery and at a
// moment of our choosing); see docs/STATUS.md.
func (w *worker) yieldGo() bool {
	if now := nanotime(); now-w.lastYield > goYieldEvery {
		w.lastYield = now
		w.inGo.Store(true)
		runtime.Gosched()
		w.inGo.Store(false)
		addTo(&w.times.goYield, nanotime()-now)
		w.goYields.Add(1)
		return true
	}
	return false
}

// unidle removes w from the idle list if a notifier has not done so, and
// takes over the searching count a notifier made on its behalf.
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
		s.nIdle.Add(-1)
	}
	if w.notified {
		w.notified = false
		w.searching = true
		w.searchBegin()
	}
	s.idleMu.Unlock()
}

// run gives t one slice: up to its engine's reduction limit.
func (w *worker) run(t *Task) {
	w.dispatches.Add(1)
	if t.engine != w.labelled {
		// CPU profiles split by engine: the label context is built once
		// per engine, and set only when the engine changes (no allocation
		// per dispatch).
		w.labelled = t.engine
		pprof.SetGoroutineLabels(t.engine.labels)
	}
	t.transition(Runnable, Running)
	if f := t.flags.Load(); f&(flagStamped|flagStats) != 0 {
		w.dispatched(t, f) // run-queue latency, per-task statistics
	}
	t.w = w // cleared before t becomes visible to other workers
	budget := t.engine.cfg.Load().ReductionLimit
	if w.inherit > 0 {
		// From the lifo slot: the rest of its waker's slice (find).
		budget = min(budget, w.inherit)
		w.inherit = 0
	}
	w.inTask = true
	if w.cur.Load() != t.exec {
		w.cur.Store(t.exec)
	}
	w.slice(t, &budget)
	w.inTask = false
	w.sliceLeft = budget
}

// takeExec returns a recycled Exec: from w's own pool (owner only: no
// allocation, no lock), else from the shared second level, else a new
// one. w may be nil (the host).
func (w *worker) takeExec() *vmloop.Exec {
	if w != nil && (len(w.execs) > 0 || w.s.spares.take(&w.execs)) {
		ex := w.execs[len(w.execs)-1]
		w.execs = w.execs[:len(w.execs)-1]
		return ex
	}
	if ex, ok := execPool.Get().(*vmloop.Exec); ok {
		return ex // the last level (per-P caches)
	}
	return new(vmloop.Exec) // NewExec is new + Reset
}

// putExec pools the recycled ex in w's own pool; a full pool first gives
// half of itself to the spares (a batch). w may be nil (the host): then
// ex goes to execPool.
func (w *worker) putExec(ex *vmloop.Exec) {
	if w == nil {
		execPool.Put(ex)
		return
	}
	if len(w.execs) == execPoolSize {
		w.s.spares.give(&w.execs)
	}
	w.execs = append(w.execs, ex)
}

// idBlock is how many task ids a worker takes from the shared counter at
// a time: spawns on different workers do not take the counter's line from
// each other every time (Go hands goroutine ids out to its Ps the same
// way). Ids stay unique, and increase in spawn order on each worker.
const idBlock = 64

// newID returns a fresh task id; w may be nil (the host).
func (w *worker) newID(s *Scheduler) uint64 {
	if w == nil {
		return s.nextTask.Add(1)
	}
	if w.idNext == w.idEnd {
		w.idEnd = s.nextTask.Add(idBlock) + 1
		w.idNext = w.idEnd - idBlock
	}
	id := w.idNext
	w.idNext++
	return id
}

// slice runs t until its slice ends: it completes, suspends, yields or
// uses up *budget.
func (w *worker) slice(t *Task, budget *int64) {
	s := w.s
	ex := t.exec
	if t.tm != nil && t.tm.owner != nil {
		dropTaskTimer(w, t) // its wait ended: the timer must not fire later
	}
	if st := t.io(); st != nil && st.owner != nil {
		dropTaskIO(t)
	}
	if ex.Stopped() {
		// Where a stop is cleared (and samplePreempted, during a slice a
		// sample request stopped): the stop that ended the last slice, a
		// kick meant for an earlier slice (kickOne), a cancel's, a sample
		// request's. Cleared before the cancel flag is read: Cancel sets
		// that flag before it stops the Exec, so a cancel's stop is never
		// lost.
		ex.ClearStop()
	}
	if t.has(flagCancel) {
		if t.resume {
			t.resume = false
			w.abandonWait(t)
		}
		s.finish(w, t, Outcome{Kind: Cancelled})
		return
	}
	if t.resume {
		t.resume = false
		t.disarm()
		// A resumed request that completes goes straight on: the task has
		// received its result, and a cancel that arrived meanwhile is
		// observed at its next safe point, not here (where it would end
		// the task with the result unseen).
		if a := s.disp.Resume(t, ex.Request()); a != ActContinue && !w.act(t, a, budget) {
			return
		}
	}
	for {
		sig := ex.Run(*budget)
		w.spent += *budget - ex.Left()
		*budget = ex.Left()
		switch sig {
		case vmloop.SigCompleted:
			w.end(t, Outcome{Kind: Success, Value: ex.Result()})
			return
		case vmloop.SigThrown:
			w.end(t, Outcome{Kind: Failure, Value: ex.Thrown(), Stack: ex.ThrownStack()})
			return
		case vmloop.SigTrap:
			w.end(t, Outcome{Kind: Trapped, Trap: ex.Trap(), Stack: ex.TrapStack()})
			return
		case vmloop.SigPreempted:
			if w.sampleReq.Load() != 0 && w.samplePreempted(t, *budget) {
				continue // the stop was a sample request's only
			}
			if *budget <= 0 {
				// A whole slice: a task that runs long gets register and
				// frame stacks no other task's share a cache line with
				// (vmloop.Exec.Isolate; once, then a no-op check).
				ex.Isolate()
			}
			w.endSlice(t)
			return
		case vmloop.SigIntrinsic:
			req := ex.Request()
			c := int64(intrCost)
			if req.Op == vmloop.SPAWN {
				c = spawnCost(t.engine.cfg.Load().ReductionLimit)
			}
			*budget -= c
			w.spent += c
			var a Action
			if req.Intr != nil && req.Intr.ID >= vmloop.HostIntrinsicBase {
				t0 := nanotime()
				a = s.disp.Intrinsic(t, req)
				addTo(&w.times.host, nanotime()-t0)
			} else {
				a = s.disp.Intrinsic(t, req)
			}
			if !w.act(t, a, budget) {
				return
			}
		}
	}
}

// abandonWait ends the wait of a cancelled task that will not resume: a
// completer that won its wake before the cancel carried a result, which
// the dispatcher releases or passes on (wait.go).
func (w *worker) abandonWait(t *Task) {
	if ph := t.wokenBy(); ph == phWoken || ph == phSignalled {
		w.s.disp.Abandon(t, t.exec.Request(), ph == phSignalled)
	}
	t.disarm()
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
		if t.has(flagCancel) || *budget <= 0 {
			if *budget <= 0 {
				ex.Isolate() // a whole slice, ended at an intrinsic (see SigPreempted)
			}
			w.endSlice(t)
			return false
		}
		return true
	case ActYield:
		w.endSlice(t)
		return false
	case ActSuspend:
		if w.sampleReq.Load() != 0 {
			w.takeSample(t)
		}
		w.publish(t)
		if t.has(flagCancel) {
			// Suspension points observe cancellation. The armed wait is
			// abandoned: ending it here with a cancelled phase shuts out
			// completers (a host completion, a signal from another
			// worker); one that won already has its result released, and
			// an operation submitted for it is cancelled.
			if tok, ok := t.current(); ok {
				tok.wakeAs(phCancelled)
			}
			if st := t.io(); st != nil && st.owner != nil {
				dropTaskIO(t)
			}
			w.abandonWait(t)
			s.finish(w, t, Outcome{Kind: Cancelled})
			return false
		}
		t.resume = true
		t.w = nil
		s.waiting.Add(1)
		if !t.park() {
			// Woken before it parked: it is Runnable again.
			s.waiting.Add(-1)
			if !w.stampSkip(t) {
				s.stampEnqueue(w, t, true)
			}
			w.local.push(t, &s.inject)
		}
		return false
	case ActThrown:
		w.end(t, Outcome{Kind: Failure, Value: ex.Thrown(), Stack: ex.ThrownStack()})
		return false
	default: // ActTrap
		w.end(t, Outcome{Kind: Trapped, Trap: ex.Trap(), Stack: ex.TrapStack()})
		return false
	}
}

// end completes t with o. Where it stopped is not published: only live
// tasks are listed (a locked store per task saved).
func (w *worker) end(t *Task, o Outcome) {
	if w.sampleReq.Load() != 0 {
		w.takeSample(t) // before finish recycles the Exec
	}
	w.s.finish(w, t, o)
}

// endSlice ends t's slice at a safe point: a cancelled task completes
// Cancelled (S-13), any other goes behind the others (S-6).
func (w *worker) endSlice(t *Task) {
	if w.sampleReq.Load() != 0 {
		w.takeSample(t)
	}
	if t.has(flagCancel) {
		w.end(t, Outcome{Kind: Cancelled})
		return
	}
	w.publish(t) // its stop, if any, is cleared when it next runs (slice)
	w.requeue(t)
}

// requeue puts a preempted or yielding task behind the others (S-6).
func (w *worker) requeue(t *Task) {
	t.w = nil
	t.transition(Running, Runnable)
	if !w.stampSkip(t) {
		w.s.stampEnqueue(w, t, false)
	}
	if n := w.lifo.Swap(nil); n != nil {
		// What t spawned or woke goes before t, not behind it: it must
		// not wait for another of t's slices.
		w.local.push(n, &w.s.inject)
	}
	w.local.push(t, &w.s.inject)
	w.injectFirst = true
	if len(w.s.workers) > 1 && w.local.len() > 1 {
		// Others wait behind it here: let an idle worker steal them.
		w.s.notify()
	}
}

// publish records where t stopped, for introspection.
func (w *worker) publish(t *Task) {
	fn, pc := t.exec.Loc()
	t.where.Store(uint64(fn)<<32 | uint64(uint32(pc)))
	if t.has(flagStats) {
		t.rare.Load().reductions.Store(t.exec.Reductions())
	}
}
