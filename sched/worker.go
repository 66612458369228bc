package sched

import (
	"runtime"
	"runtime/pprof"
	"sync/atomic"
	"unsafe"

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
// so far run while their records are still in this core's cache
// (TestFanOutYieldsToChildren; spawn_many measures the gain), and the
// spawner's slice bounds its queue's wait as any slice does (S-6).
func spawnCost(limit int64) int64 { return lifoCost(limit) }

// intrCost is the reductions every other intrinsic costs beside its
// instruction's one: the round trip from the VM loop through the worker
// and the dispatcher and back takes about as long as that many simple
// instructions, so a slice of intrinsic calls lasts about as long as a
// slice of plain bytecode, which S-6's bound counts in. Measured by
// BenchmarkSliceTimeIntrinsics (the slice time of a time.now loop against
// a loop of adds).
const intrCost = 32

// ioPollEvery is how many dispatches a busy worker with I/O in flight runs
// between two polls of its backend.
const ioPollEvery = 16

// goYieldEvery is the least time between two yieldGo hand-overs: below
// sysmon's 10 ms long-running threshold (forcePreemptNS in Go's runtime)
// by more than the 64 picks between two checks of a busy worker (about
// 1.4 ms of default slices), so that sysmon sees the worker's P change
// between two of its looks, and not lower, because each hand-over of a
// locked thread costs the worker tens of microseconds
// (BenchmarkFairness's tail shows it).
const goYieldEvery = 8_000_000 // ns

// worker is one scheduler thread: a goroutine locked to its OS thread that
// runs tasks by calling their VM loop and switches tasks by returning.
type worker struct {
	s  *Scheduler
	id int
	// home is w's list in the registry (registry.go), nil for a worker
	// made outside New; set by New. gone holds, by home, the tasks that
	// ended here away from their home, until pushDead pushes them.
	home *regHome
	gone []goneChain
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
	// shares one slice; the queue waits at most about one slice). Read
	// and written only by the owner, but for metrics' racy look
	// (lifoFull): an atomic swap or store was a locked instruction per
	// spawn, wake and pick (BenchmarkSpawnJoin, BenchmarkPingPong).
	lifo *Task
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
	// inVM is true while the VM loop's spawn (spawnInVM) launches a
	// child (owner only): the push it makes may be lazy (enqueue).
	// lazyPush is true once such a push published its tail with a
	// release store, until flushPushes made the wake check again after
	// a full barrier (owner only; the nIdle, nSearching / push pair).
	inVM, lazyPush bool
	// fence is the word flushPushes adds to for its barrier (owner only:
	// a line no other worker writes).
	fence atomic.Uint32
	// left is the budget of the slice running here (owner only): run
	// sets it and slice spends it; a task run first (runFirst) spends
	// the same budget, and its waiter goes on with what is left.
	left int64
	// first is true while a task runs first, nested in the slice of the
	// task running here (owner only): a wait inside it parks as usual
	// (runFirst nests once).
	first bool
	// firstJoins counts the joins whose target ran first here
	// (RunFirst); firstWoken the waits taken in place because the task
	// run first woke them (act).
	firstJoins, firstWoken ownCount
	// reaping is true while pollIO wakes the tasks of the completions it
	// reaped (owner only): those wakes go to the local queue without a
	// notify each, and the reap's caller notifies once (shareBacklog).
	// In its park a worker is still on s.idle while it reaps, so a
	// notify per wake picked the worker itself (a Wake system call to its
	// own backend) or woke another to find nothing: the reaper runs the
	// first of those tasks itself.
	reaping bool
	// cur is the Exec of the task whose slice runs here or ran last,
	// written by the owner alone with a plain store at dispatch (and by
	// a run first, twice), not cleared after: an atomic store is a locked
	// instruction, two per spawn + join (BenchmarkSpawnJoin). kickOne,
	// StopTheWorld and RequestSamples read it racily (curEx) and Stop
	// that Exec. A read that misses the latest store stops the Exec that
	// ran before; the running task's slice then ends at its budget (S-6),
	// and the worker answers the kick, stop or sample at its next pick, so
	// a lost stop costs at most the rest of one slice. A Stop that lands
	// after the slice ended is cleared when that Exec next runs (slice) or
	// is reused (Reset).
	cur *vmloop.Exec
	// running is the task whose Exec is cur (owner only: written at
	// dispatch beside cur; read by ExecTask on this worker's thread).
	running *Task
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
	// tr is the worker's tracing state, nil when it traces nothing
	// (trace.go: written only while the worker is stopped, or before
	// Start). sliceT0 is the clock at the start of the running slice
	// when its engine checks for long slices (longLim, ns), else 0
	// (owner only).
	tr      *workerTrace
	sliceT0 int64
	longLim int64
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

	// tasks are task records (with their Execs) that completed on this
	// worker with nothing else naming them, reused by spawns from tasks
	// running here before the spares and taskPool are asked (owner only;
	// reuse.go).
	tasks []*Task

	// timers is the worker's shard of every engine's timer wheel (owner
	// only; timers.go).
	timers workerTimers

	// io is the worker's completion backend, set on the worker's thread
	// when it starts (nil without one: ioErr says why); read by notifiers
	// to wake the worker, hence atomic.
	io    atomic.Pointer[workerIO]
	ioErr string

	// Counters (written only by this worker, read racily by metrics and
	// the profiler: ownCount).
	labelled   *Engine // engine whose pprof labels the goroutine carries
	lastYield  int64   // nanotime of the last yieldGo hand-over
	dispatches ownCount
	parks      ownCount
	goYields   ownCount
	parkYields ownCount // the goYields made on the way into a park (tests)
	steals     ownCount
}

// ownCount is a counter that only its worker writes, with a plain add (an
// atomic add is a locked instruction, and dispatches is counted at every
// dispatch: BenchmarkYieldMany), and that others read without
// synchronization (load): metrics, and the profiler's request stamp,
// which only asks whether the count has moved since. A racy load of an
// aligned word returns a value some write stored, never a mix of two
// (the Go memory model's rule for word-sized races): at worst one that
// is a few counts behind.
type ownCount struct{ n uint64 }

// add adds d; only the owning worker calls it.
func (c *ownCount) add(d uint64) { c.n += d }

// load reads the count from any goroutine (see ownCount; not inlined, so
// that the race detector leaves this one read out).
//
//go:norace
//go:noinline
func (c *ownCount) load() uint64 { return c.n }

// lifoFull reports whether w's lifo slot holds a task, read from another
// goroutine (metrics), racily as ownCount.load.
//
//go:norace
//go:noinline
func (w *worker) lifoFull() bool { return w.lifo != nil }

// curEx returns w.cur, read from another goroutine racily as
// ownCount.load: the Exec of the slice running on w or of one that ran
// before it (see cur).
//
//go:norace
//go:noinline
func (w *worker) curEx() *vmloop.Exec { return w.cur }

func (w *worker) loop() {
	defer w.s.wg.Done()
	runtime.LockOSThread()
	// A pinned thread must not go back to Go's thread pool: returning from
	// the goroutine while still locked makes the runtime end the thread.
	if pinned := w.cpu >= 0 && pinThread(w.cpu) == nil; !pinned {
		defer runtime.UnlockOSThread()
	}
	defer tightTimers()() // before the thread is unlocked, and before tid is published
	w.tid.Store(int64(threadID()))
	w.times.start.Store(nanotime())
	if open := w.s.openIO; open != nil {
		// On the locked thread: an owner-thread ring belongs to it.
		if b, err := open(w.id); err != nil {
			w.ioErr = err.Error()
		} else {
			w.io.Store(newWorkerIO(b))
			defer func() { // before the thread is unlocked or ends
				// A panic on the worker (a backend's Wait with its lock
				// held, say) goes on with its traceback: Close would block
				// on that lock and hide it, the worker lost without a trace
				// (TestWorkerPanicIsNotHidden).
				if r := recover(); r != nil {
					panic(r)
				}
				b.Close()
			}()
		}
	}
	for {
		t := w.next()
		if t == nil {
			break
		}
		w.run(t)
		if w.home.dead.Load() != nil {
			w.reapDead()
		}
	}
	w.regAway() // for good: whoever ends one of its tasks unlinks it
	if x := w.io.Load(); x != nil {
		w.stopIO(x) // before the deferred Close
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
		t := w.find()
		if t == nil {
			t = w.spin()
		}
		if t != nil {
			if w.searching {
				w.endSearch()
			}
			return t
		}
		w.sleep()
	}
}

// spinFinds is how many more times a worker that found no work looks
// again before it parks while another worker runs, when every worker
// has a CPU of its own. A worker that parks at once is woken by the busy
// worker's next push past its lifo slot: a wake system call for the
// pusher, a sleep and a wake-up for the sleeper, and soon the same again,
// over a whole fan-out (BenchmarkSpawnMany at 2 workers;
// docs/PERFORMANCE.md, "A worker looks again before it parks") or for
// every task a busy worker hands over (BenchmarkHandOff: 128 looks, about
// 4 µs, keep the idle worker up between tasks handed over every few
// microseconds; "Longer looks where each worker has a CPU").
const spinFinds = 128

// spinFindsShared is spinFinds when the process has fewer CPUs than
// workers (runtime.NumCPU, which follows the affinity mask, as taskset
// sets it): a worker that looks again there takes the CPU from the
// worker whose work it waits for (echo_proc's server, pinned to one CPU),
// so it looks for about a microsecond only.
const spinFindsShared = 32

// looksFor returns the look count (Scheduler.spinLooks) of a scheduler
// of workers workers.
func looksFor(workers int) int {
	if runtime.NumCPU() >= workers {
		return spinFinds
	}
	return spinFindsShared
}

// spin looks for work up to s.spinLooks more times, without blocking, while
// another worker runs (its spawns and wakes are the work that may come
// next); nil when none came, when every other worker is idle, or when w
// must stop. A searcher stays one meanwhile, so pushes wake nobody else.
// Go's spinning threads look again the same way before they park.
func (w *worker) spin() *Task {
	s := w.s
	if len(s.workers) == 1 || int(s.nIdle.Load()) >= len(s.workers)-1 {
		return nil
	}
	for range s.spinLooks {
		if w.stop.Load() {
			return nil
		}
		if t := w.find(); t != nil {
			return t
		}
	}
	return nil
}

// run gives t one slice: up to its engine's reduction limit.
func (w *worker) run(t *Task) {
	w.dispatches.add(1)
	if t.engine != w.labelled {
		// CPU profiles split by engine: the label context is built once
		// per engine, and set only when the engine changes (no allocation
		// per dispatch).
		w.labelled = t.engine
		pprof.SetGoroutineLabels(t.engine.labels)
	}
	w.enter(t)
	cfg := t.engine.cfg.Load()
	if w.tr != nil || cfg.LongSlice > 0 {
		w.traceDispatch(t, cfg.LongSlice)
	}
	w.left = cfg.ReductionLimit
	if w.inherit > 0 {
		// From the lifo slot: the rest of its waker's slice (find).
		w.left = min(w.left, w.inherit)
		w.inherit = 0
	}
	w.inTask = true
	w.slice(t, &w.left)
	w.inTask = false
	w.sliceLeft = w.left
	if w.lazyPush {
		w.flushPushes()
	}
}

// flushPushes ends the lazy pushes of the slice (enqueue): a full
// barrier, then the wake check again. A worker that began to park
// counted itself idle, then left the searchers, then looked at every
// ring; if that look missed a lazy push, the push's tail was not yet
// visible, so the barrier comes after the worker counted itself, and
// notify sees it idle. Called before the worker leaves the VM loop for
// a host call (callHost) and at the end of each slice.
func (w *worker) flushPushes() {
	w.lazyPush = false
	w.fence.Add(1) // a locked instruction: the full barrier
	if w.local.len() > 0 {
		w.s.notify()
	}
}

// enter makes t, picked (run) or run first (runFirst), the task running
// on w: Running, its dispatch counted and stamped, its Exec the one a kick
// stops.
func (w *worker) enter(t *Task) {
	t.transition(Runnable, Running)
	if f := t.flags.Load(); f&(flagStamped|flagStats) != 0 {
		w.dispatched(t, f) // run-queue latency, per-task statistics
	}
	t.link = unsafe.Pointer(w) // cleared before t becomes visible to other workers (runner)
	if w.cur != t.ex() {
		w.cur = t.ex()
	}
	w.running = t
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
