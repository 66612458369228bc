// Package sched is the M:N scheduler of the Jade VM: tasks (verified
// bytecode programs run by vmloop) on a fixed set of worker OS threads,
// with lock-free run queues and work stealing, engine-local timer wheels,
// one completion backend per worker, and the wait/wake protocol every
// suspension goes through. The RuntimeBus (package bus) is its only
// client: it checks capabilities and turns intrinsic requests into calls
// on Control.
//
// Where things are (one job per file):
//
//	sched.go               Scheduler, Control, Config, New, Start, finish
//	engine.go, livebank.go engines: configuration, registration, limits, live-task banks
//	spawn.go               Prepare (host), PrepareSpawn (bytecode), Launch, Cancel
//	spawn_copy.go          requests done in bounded steps (ActMore): a spawn's copy, a join's, a message's
//	task.go, reuse.go      the task record, its states, record reuse
//	records.go             owner-only index tables (timers, I/O records)
//	spares.go              recycled task records shared between workers
//	wait.go, waitlist.go   the wait word, tokens, waiter lists
//	wake.go                joins (and a select's join case), event waits, host
//	                       suspensions and completions, wakes
//	idle.go                enqueue, notify, kickOne, parking and unidling (this essay)
//	worker.go              the worker loop, task ids
//	search.go, deque.go    finding work: LIFO slot, local ring, inject queue, stealing
//	queue.go               the inject queue
//	slice.go               one slice: run, dispatcher actions, end, requeue
//	joinfirst.go           a join that runs its target, waiting in the lifo slot, first
//	timers.go, periodic.go timer shards, timeouts, periodic jobs
//	stall.go               a stalled worker's timers fired by another
//	io.go, fd.go           completion backends, I/O waits, descriptor lifetime
//	iopoll.go              readiness polls of a wait with several cases (a select)
//	fd_transit.go          descriptors handed over to a receiver not known yet
//	event.go               events (auto-reset, signal/broadcast)
//	invm.go                requests the VM loop answers through hooks
//	shutdown.go, report*.go drain, shutdown, task reports (file:line,
//	                       what a Waiting task waits for)
//	registry.go            the registry of live tasks: a list per worker
//	bias.go                owner-biased structures (the banks, the registry lists)
//	metrics.go             the read-only snapshot
//	metrics_*.go           latency histograms and their sampled stamps,
//	                       worker times, task names and statistics, task
//	                       stacks (stop the world)
//	profile.go             CPU samples of Jade stacks at safe points (jprof)
//	trace.go, trace_hooks.go the event trace (jtrace): flight recorder,
//	                       full traces, hooks, long slices and host calls
//
// This essay covers the protocols that are spread over many fields: how
// idle workers are found and woken, how task records are reused, and how
// a stopping worker gives back what its backend still holds. How a
// stalled worker's timers fire elsewhere is in stall.go. The wait/wake
// protocol is in wait.go, I/O and descriptors in io.go and
// fd.go.
//
// # Idle, searching, notified
//
// A worker that finds no work in its LIFO slot, its ring or the inject
// queue may search: steal half of another worker's ring. At most half of
// the workers search at once (beginSearch: 2·nSearching < workers, as in
// Tokio's idle.rs), so a burst of work does not set every idle worker
// spinning over the others' rings. A worker that found nothing looks
// again while another worker runs (worker.spin: spinFinds times, about
// 4 µs, when every worker has a CPU of its own, spinFindsShared, about
// 1 µs, when workers share CPUs), staying a searcher, so that the busy
// worker's pushes wake nobody (a worker parked at once was woken by the
// next push, over and over, on a fan-out or a stream of hand-offs), and
// then sleeps
// (worker.sleep): it appends itself to the idle list (idleMu, nIdle), then
// leaves the searching state, then looks at the queues once more, then
// blocks in its park (its backend's Wait, or a futex). The last searcher
// to leave re-checks every worker's ring.
//
// A producer (enqueue from outside a worker, a steal-worthy push) first
// pushes, then calls notify, which loads nSearching and nIdle. Either the
// sleeper's last look sees the pushed task, or the producer sees the
// sleeper idle (or still searching, and then the last searcher's re-check
// sees the task): no wake-up is lost, and there is no heartbeat that would
// paper over a lost one (S-4). A spawn from bytecode is the one push whose
// check is late: its tail store is a release store (a locked store per
// spawn cost a 2-worker fan-out about 8 % of its time), and its worker
// makes the check again after a full barrier before it can be held up, at
// a host call and at the slice's end (flushPushes); the task is on the
// pusher's own queue meanwhile, so a missed wake delays only the
// parallelism, by at most the rest of the slice (S-6). notify takes the
// most recently idled worker off the list, marks it notified and counts it
// in nSearching on its behalf, so that a burst of pushes wakes one worker,
// not all of them; the woken worker takes that searching count over
// (unidle). A notified worker must come back from its park and take that
// count over: until it does, notify sees a searcher and wakes nobody, and
// with two workers the other may not begin a search either. So the park's
// Wait must outlive a signal that interrupts it (EINTR: it waits on until
// the Wake, TestEpollWaitInterrupted), and a worker that fails in its park
// takes the process down with its panic (loop) instead of blocking in its
// backend's Close (TestWorkerPanicIsNotHidden): a worker lost that way
// looks like a lost wake-up, tasks queued and every CPU idle. A worker
// that reaps completions in its own park does not notify for them (they go
// on its own ring, and it is still on the idle list: it would pick
// itself); after the reap it is off the list and wakes one other worker
// only when more than one task waits (shareBacklog).
//
// When every worker is busy, an outside wake also kicks one running slice
// (kickOne): the slice stops at its next safe point and the worker looks
// at the inject queue first, so an outside wake waits for a safe point,
// not a slice boundary (S-6).
//
// Order under load: a ring that overflows moves its older half to the
// inject queue, which a busy worker takes from only every 32 picks, one
// task at a time while its ring is full. Completions reaped while the
// inject queue holds tasks therefore go behind them (enqueue), not onto
// the ring ahead of them: otherwise each reap refilled the ring and the
// overflowed tasks waited for every later completion (measured by the
// echo_proc_1000 scenario; figures in docs/PERFORMANCE.md). A
// ring's newer half still runs before the older half moved out of it, a
// wait bounded by the ring's size.
//
// # Record reuse
//
// Task records, each holding its Exec (the VM state: one allocation per
// task), are pooled once nothing can reach them: in the cache of the
// worker whose finish dropped the last reference (w.tasks, owner only,
// up to taskCacheSize; the next spawns from tasks on that worker take
// from it first; a full cache gives half of itself to the scheduler's
// spares, where an empty one takes a batch; the spares let go after a
// garbage collection of what no spawn took since the one before), else
// in taskPool (a reference dropped elsewhere: the host):
//
//   - refs counts the references that keep a record: 1 while the task is
//     live (dropped as the very last step of finish) plus 1 per task
//     reference a heap holds (vmloop's task reference table, or an object
//     where the table is full; vmloop reports them through its task-ref
//     hooks: made, freed, dropped with a heap). A spawn's own reference
//     is counted by PrepareSpawn (refs starts at 2) and made uncounted
//     (vmloop.Exec.CompleteTask); a detached spawn (vmloop.SpawnDetached)
//     makes none (refs starts at 1), so its caller must not touch the
//     child once Launch has published it. At 0 the record is recycled:
//     into the cache of the worker that dropped the last reference when
//     that was finish (the ending task's heap too: leave keeps its runner
//     until its Exec is released) or a FREE by a running task
//     (vmhook.TaskDrop names the holder's Exec, whose record gives the
//     worker), else into taskPool,
//     after its Exec gives its spare reference slots back to vmloop's
//     table (poolTask); a scheduler that ends gives back those of its
//     cached and spare records (dropRecordSlots, TestTaskRefSlotsGoBack).
//   - flagPinned (in Task.flags, beside the cancel and watched bits)
//     marks a record that a reference outside this bookkeeping holds (a
//     host spawn's *Task, a task handle exported from a heap as a Value):
//     it is never recycled.
//   - Wait tokens do not count. The wait word's generation keeps growing
//     across reuse: every arm advances it, and recycle advances it past a
//     wait the life left unended (a word not idle), so a token of an
//     earlier life never matches a later wait: a late timer, a late event
//     signal or a late I/O completion is a stale wake and does nothing. A
//     token wins only an armed or parked phase of its own generation, so
//     an idle word needs no store at recycle. recycle sets the state to
//     Runnable with a plain store: nothing reads the state of a record
//     that no reference reaches, and Launch publishes the next life's.
//   - rsHostWait is set when the task armed a wait that completeHost ends (a
//     host intrinsic, an I/O operation): such a completer locks the
//     record's mutex and reads its rare part even when its token is
//     stale, so recycle takes the mutex only for such records (every other
//     waker only CASes the wait word).
//   - The Exec's heap is released at finish (releaseExec): Exec.Recycle
//     keeps its register, frame and handle memory for the record's next
//     spawn when nothing else names the record; a record the host holds
//     (pinned) or handles keep with more than heldKeep bytes of it keeps
//     none (Exec.Retire), and what a record that handles keep still holds
//     is counted in its engine's budget until the last one goes
//     (chargeRecord, heldBytes; the live reference's drop sets the
//     charged bit in the same add, and the last handle's drop clears it
//     with one compare-and-swap, unrefOn). Every clear of the bit is a
//     compare-and-swap from "the bit alone" (or the bit and the last
//     handle) to zero, never a store: a pinned record gains handles from
//     its exported Values, which count no reference, so one may come
//     and go between a drop's add and its clear, and only the drop whose
//     swap wins gives the record's bytes back (TestChargedRecordGivenOnce).
//     The program stays for names
//     until the record is reused. A task that parks gives back the stack
//     capacity it does not use (Exec.Trim, in act): a record's kept
//     stacks serve spawns, not waits. Nothing reads a task's Exec after it completed
//     except a late Cancel's Stop, which costs the record's next task one
//     spurious preemption.
//
// # Stopping with operations in flight
//
// A task that ends with an operation in flight (cancelled in a read, say)
// does not close its descriptors: its end marks each FD closing and
// cancels the operations naming it, and the close(2) is left to the
// completion that drops the last reference (fd.go). Shutdown stops the
// workers as soon as the registry is empty, which can be before those
// completions were reaped; and a backend's Close discards the completions
// it has not returned. So a worker that stops runs stopIO before its
// backend closes, on its own thread: it cancels every operation left in
// its in-flight table and polls until the table is empty (at most
// ioStopGrace). Every completion reaped there goes through pollIO as any
// other: the FD reference is dropped (the last one closes the number),
// and a descriptor an accept or open produced for a task that no longer
// waits is closed. The releases of one worker may close a number another
// worker's backend still has registered: closeFD makes every backend
// forget it first, and a backend already closed ignores the Forget.
// Shutdown waits for the workers, so when it returns before its deadline
// no descriptor of an ended task is open (TestStopReapsCancelledIO,
// examples.TestStopLeavesNoDescriptors). Descriptors in transit (taken
// from their owner for a message no task has received: fd_transit.go)
// are closed once the tasks have ended, before the workers stop
// (TestFDTransitClosesExactlyOnce).
//
// # Requests answered in the VM loop
//
// A few requests cost far more to make than to answer, so the VM loop
// answers them itself for a task record running on its worker, through
// hooks that internal/vmhook carries from vmloop to this package (invm.go;
// the loop calls them only for an Exec marked as a record's, so the
// record is found from the Exec and its runner is the calling worker):
// time.timeout sets the task's timer state, event.signal wakes a waiter or
// keeps the signal, and event.wait takes a kept signal or arms the wait
// and registers its token, exactly as Control.EventWait does. An armed
// wait stops the loop with vmloop.SigWait and the request recorded; runs
// charges it as a request and parks the task through act's ActSuspend,
// so the wait/wake protocol (wait.go) and the lifo-slot run first
// (joinfirst.go) are the same as for a request the dispatcher suspended.
// rsVoid marks such a wait, and begin completes it with no value
// instead of asking the dispatcher's Resume. A wait that a one-shot
// timeout bounds, a handle the loop cannot resolve and every other
// intrinsic stay requests, so the timer arming, the traps and the
// dispatcher's view of them are unchanged (TestEventAnsweredInVM,
// TestTimeoutAnsweredInVM; TestRingMixesWaits mixes both kinds of wait
// with resumed joins in one task, at 1 to 8 workers).
//
// A spawn is answered in the loop too, for an engine whose dispatcher
// grants every spawn of its tasks (Control.SpawnInLoop: the bus, for an
// engine holding CapSpawn): the hook does what the bus's answer does,
// PrepareSpawn, the child's handle into the spawner's heap, Launch, and
// the loop charges spawnCost and the arguments' copies as runs charges
// the request, at a safe point. A spawn with an ext argument (the bus
// hands descriptors to the child), one whose arguments take more than a
// copy step (makeTask keeps the child for the request: takeSpawn), and
// one that fails (a limit, a stale handle, a stopping scheduler) stay
// requests: the dispatcher goes on with the copy or reports the failure
// as before (TestSpawnAnsweredInVM).
//
// A join (joini, joinf, joinv) is answered in the loop when no one-shot
// timeout bounds it and its target has completed with a void, i64 or f64
// result, or is the task in the worker's lifo slot and completes in a run
// first: the hook brings w.left up to date with the loop's budget (and
// w.spent with what the loop used of it), runs the target as RunFirst
// does when firstOK allows it, and hands the loop the budget left. A
// target that is running elsewhere or parked, one that failed, a
// reference result and a join a timeout bounds stay requests, so joiner
// registration, resumption and the thrown TaskErrors are the
// dispatcher's as before (TestJoinAnsweredInVM).
//
// A yield needs no answer at all: the loop ends a record's slice at a
// YIELD with vmloop.SigYield, the instruction done and no request
// pending, and runs charges intrCost as for the request, then goes on in
// place or puts the task behind the others as act does for ActYield
// (yieldInPlace, requeue). No dispatcher sees a record's yield; any other
// Exec's is a request as before (TestYieldAnsweredInVM, TestYieldInPlace).
//
// # Store-then-load pairs
//
// Several hand-offs use no lock: each side stores its flag, then loads
// the other's (sequentially consistent sync/atomic), so at least one of
// the two sees the other. Each pair, and the test that fails when it is
// reordered:
//
//	watched / Completed      AwaitTask and Done set flagWatched
//	                         (under the task's mutex) then load the state;
//	                         finish publishes Completed then loads the flag
//	                         (TestOutcomeWhileDone, TestExactlyOnce); a
//	                         task alone (refs 1, not pinned: nothing can
//	                         watch it) publishes with a release store
//	                         (Task.alone, TestExactlyOnceDetached)
//	draining / registry      asymmetric: Drain stores draining, runs
//	                         asymfence.Heavy, then counts the registry;
//	                         finish counts the task's end (a release
//	                         store) then loads draining
//	                         (TestDrainWaitsForEveryTask)
//	busy / revoked           asymmetric, twice: a bank's owner
//	  (bank, registry list)  (livebank.go) and a registry list's owner
//	                         (registry.go), each through bias (bias.go),
//	                         store busy with a release
//	                         store, then load revoked, and touch what it
//	                         guards only if it is clear; a holder of
//	                         liveMu, or of the list's lock, stores
//	                         revoked, runs asymfence.Heavy (a barrier on
//	                         every running thread), then waits for busy
//	                         to clear (TestLiveBanksNeverPassTheLimit,
//	                         TestLiveTasksNeverMissesALiveTask,
//	                         TestBankBiasRevoked, TestRegistryWalkRaces)
//	dead / away              a task that ended off its home is pushed on
//	                         the home's dead stack, then the pusher loads
//	                         away; a home about to park stores away (under
//	                         its list's lock), then loads the dead stack:
//	                         an ended task is unlinked by its home, or by
//	                         the pusher under the lock
//	                         (TestRegistryEndsElsewhere)
//	nIdle, nSearching / push a sleeper stores nIdle and leaves nSearching,
//	                         then looks at the queues; a producer pushes,
//	                         then loads both (TestLostWakeups,
//	                         TestIdleWorkersPark, TestExactlyOnce,
//	                         TestQueuedTaskWakesAParkedWorker). The
//	                         push's tail store is sequentially
//	                         consistent for it: a release store let a
//	                         worker park beside a queued task. A spawn
//	                         from bytecode (spawnInVM) pushes with a
//	                         release store and loads both; its worker
//	                         then adds to its own fence word (a full
//	                         barrier) and loads both again before it
//	                         calls a host intrinsic and at the end of
//	                         the slice (flushPushes): a worker that
//	                         parked beside the task is woken then, and
//	                         the task waits at most the rest of the
//	                         slice, on its pusher's own queue
//	cancel / Stop            Cancel stores the cancel flag, then stops the
//	                         Exec; a slice clears the stop, then loads the
//	                         flag (TestCancelRaces)
//	armed / cancel           a task arms its wait word (a locked store),
//	                         then loads the cancel flag before it parks
//	                         (act); Cancel ors the flag in, then loads
//	                         the wait word (current) and cancels an armed
//	                         or parked wait: the task parks only if
//	                         Cancel will see it armed (TestCancelRaces)
//	kick, cancel / sample    kickOne stores kick and Cancel the cancel flag
//	                         before their Stop; a slice that a sample
//	                         request preempted clears the stop, then loads
//	                         both, and goes on only if neither is set
//	                         (samplePreempted; TestSamplePreempted); the
//	                         sample taken around a host call does the same
//	                         and also keeps a stop of the world's stop
//	                         (clearSampleStop)
//	hostLaunches / stopping  a host spawn counts itself in hostLaunches,
//	                         then loads stopping; Shutdown stores stopping,
//	                         then waits for hostLaunches to reach 0
//	                         (TestShutdownCancelsLateLaunches,
//	                         TestHostSpawnRacingShutdownEnds)
//	pub / hint               an owner stores its earliest deadline (pub),
//	                         then loads the hint and lowers it (CAS) if it
//	                         is later; a thief raises the hint (CAS), then
//	                         loads every pub again and lowers it for one it
//	                         missed (stall.go rescue;
//	                         TestStalledWorkersTimersFireElsewhere)
//	hint / watcher, until    an owner lowers the hint, then loads the
//	                         watcher and its until and unparks it when it
//	                         would wake too late; a parking watcher stores
//	                         until, then loads the hint again (watch;
//	                         TestStalledWorkersTimersFireElsewhere at 2
//	                         workers)
//	nIdle, watcher / hint    a parking worker counts itself in nIdle and
//	                         takes the vacant watcher role, then loads the
//	                         hint; an owner that lowered the hint, or a
//	                         leaving watcher that cleared the role, loads
//	                         the role and nIdle and unparks an idle worker
//	                         to watch (wakeWatcher;
//	                         TestStalledWorkersTimersFireElsewhere at 4
//	                         workers)
//	cur / kick, stop, sample not a pair: the owner stores cur (the Exec
//	                         it dispatches, and a join running its target
//	                         first stores the joiner's back) as a plain
//	                         word; kickOne, StopTheWorld and
//	                         RequestSamples store their flag, then read
//	                         cur racily (curEx) and stop that Exec. A read
//	                         that misses the latest store stops the Exec
//	                         before it (cleared when it next runs or is
//	                         reused); the running slice ends at its
//	                         budget and the next pick answers the flag,
//	                         so a lost stop costs at most the rest of one
//	                         slice, which S-6 bounds
//	                         (TestJoinFirstKeepsTheSliceBound,
//	                         TestSamplePreempted under -race)
//	spares count             not a pair: a hint. give and take store the
//	                         spares' length under its lock; take loads it
//	                         first and does not lock at 0. A take that
//	                         misses a batch being given makes or pools a
//	                         record instead; nothing is lost
//	                         (TestTaskSparesMoveBatches, under -race too)
//	hold                     not a pair: one CAS from free decides whether
//	                         the owner or a thief touches a worker's
//	                         shards (TestStealRacesTheOwner under -race)
//	lifo, counters, where    not a pair: written by one worker only, as
//	                         plain words (the lifo slot, dispatches and
//	                         the other ownCounts), or atomically but only
//	                         when the value changes (a task's where): an
//	                         atomic store or add is a locked instruction
//	                         on every spawn, wake, dispatch or slice end.
//	                         Metrics and the profiler's request stamp
//	                         read the plain words racily (ownCount.load
//	                         and lifoFull, left out of the race
//	                         detector): an aligned word's racy load
//	                         returns a value some store wrote, at worst
//	                         a few counts behind (TestYieldInPlace,
//	                         TestSamplePreempted under -race)
//	idle wait word,          not a pair: release stores (relstore, a
//	Runnable ↔ Running,      plain store on amd64 with gc, Store under
//	a thief's own tail       the race detector and elsewhere). A
//	                         disarmed wait word is written when no waker
//	                         can win it any more, which loses on the
//	                         phase before as on idle; the state's two
//	                         owner edges (ownEdge) are taken only by the
//	                         worker dispatching or requeueing the task,
//	                         and nothing decides from them; a thief
//	                         publishes the tasks it stole into its own
//	                         queue, and its endSearch's locked add comes
//	                         before any load of the pair above; a shared
//	                         reference slot's word is the same
//	                         (vmloop/taskref.go). Only amd64 runs without
//	                         -race exercise the plain stores
//	                         (TestExactlyOnce, TestDequeStealHammer,
//	                         TestOwnEdges, relstore's litmus test). A
//	                         push's tail is among them only where a
//	                         barrier follows before its worker can be
//	                         held up (flushPushes): it is the store of
//	                         the nIdle, nSearching / push pair
//	                         (TestQueuedTaskWakesAParkedWorker fails 3
//	                         runs of 3 without the barrier before a host
//	                         call)
//
// The wait word itself (wait.go) is the one CAS protocol: exactly one waker
// wins a wait, and the phase it writes says what it carried.
//
// # Compatibility
//
// This is an implementation package of the Jade runtime, with no
// compatibility promise between versions: its API changes whenever the
// runtime needs it to. A Go host imports the root package,
// github.com/jadevm/jade, whose API and program model are what the
// module's version promises.
package sched
