package sched

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/jadevm/jade/internal/relstore"
	"github.com/jadevm/jade/vmloop"
)

// State is a task's scheduling state (spec §2.1). It is one dimension; the
// outcome is the other (S-11): Completed says nothing about success.
type State uint32

// Scheduling states.
const (
	Runnable State = iota
	Running
	Waiting
	Completed
)

var stateNames = [...]string{"Runnable", "Running", "Waiting", "Completed"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", uint32(s))
}

// legal[from][to] is the transition table of spec §2.1:
//
//	[*] → Runnable            spawn
//	Runnable → Running        dispatch
//	Running → Runnable        preemption / yield
//	Running → Waiting         event / timer
//	Waiting → Runnable        wake-up / cancellation
//	Running → Completed       return / throw / trap / cancellation
//
// A task cancelled while Runnable or Waiting is completed by the worker that
// dispatches it (Runnable → Running → Completed), so no other edge exists.
var legal = [4][4]bool{
	Runnable: {Running: true},
	Running:  {Runnable: true, Waiting: true, Completed: true},
	Waiting:  {Runnable: true},
}

// Legal reports whether from → to is a transition of spec §2.1.
func Legal(from, to State) bool { return from < 4 && to < 4 && legal[from][to] }

// OutcomeKind is the second dimension of a task (S-11), set exactly once
// when the task completes.
type OutcomeKind uint8

// Outcome kinds; the numbers are what the OUTCOME opcode returns.
const (
	Success   OutcomeKind = iota // returned a value
	Failure                      // an uncaught Throw, materialised (S-12)
	Trapped                      // a fault of the task (TrapInfo)
	Cancelled                    // cancellation was observed (S-13)
	NoOutcome OutcomeKind = 255  // not completed yet
)

var outcomeNames = [...]string{"Success", "Failure", "Trap", "Cancelled"}

func (k OutcomeKind) String() string {
	if int(k) < len(outcomeNames) {
		return outcomeNames[k]
	}
	return "None"
}

// Outcome is how a task ended.
type Outcome struct {
	Kind  OutcomeKind
	Value vmloop.Value    // Success: the result; Failure: the thrown error
	Trap  vmloop.TrapInfo // Trapped: what and where
	Stack vmloop.Stack    // Failure, Trapped: the call stack where it was thrown or trapped
	// hostBytes is Value.HostBytes() when the task's end counted it (a
	// reference result copied out of the heap), else 0; chargeOutcome
	// uses it instead of walking Value, and clears it.
	hostBytes int64
}

func (o Outcome) String() string {
	switch o.Kind {
	case Success:
		return "Success(" + o.Value.String() + ")"
	case Failure:
		return "Failure(" + o.Value.String() + ")"
	case Trapped:
		return "Trap(" + o.Trap.Error() + ")"
	case Cancelled:
		return "Cancelled"
	}
	return "None"
}

// Task is the scheduler's record of one Jade task (spec §2): identity,
// scheduling state, outcome, engine, execution state, wait token and the
// sticky cancellation flag. Tasks are heap records, not goroutines: a worker
// runs a task by calling its Exec's loop and switches tasks by returning.
type Task struct {
	id     uint64
	engine *Engine

	// state is the scheduling state. Only the worker that owns the task
	// moves it out of Running; a waker moves it Waiting → Runnable only by
	// winning the wait-word CAS (see wait.go), so every edge has one writer.
	state atomic.Uint32

	// flags holds three one-way bits and the run-queue stamp (below: the
	// stamp bits are set by whoever makes t Runnable and cleared by the
	// worker that dispatches it, so they never change while t is queued
	// but by Or of the one-way bits), set with an atomic Or and read with
	// one load (one word, not three atomic.Bools of 4 bytes each: the
	// record, with its Exec, stays in the 320-byte size class,
	// TestRecordSizes):
	//
	//   - flagCancel is sticky: set once by Cancel, never cleared while
	//     the task lives (S-13).
	//   - flagPinned: a reference to the record left the runtime's
	//     bookkeeping (a host spawn, a task handle exported from a heap as
	//     a Value): the record is never reused. Set once, by a holder of a
	//     reference. Pinned after releaseExec kept its Exec, the record
	//     gives that Exec's spare task reference slots back (finish or the
	//     pinner, under lateMu: dropLateSlots).
	//   - flagWatched is set (under mu, before they look at the state) by
	//     AwaitTask and Done: something may be registered to hear
	//     of t's completion. finish publishes an inline outcome without mu
	//     and takes mu afterwards only when it is set.
	//
	// recycle clears the word.
	flags atomic.Uint32
	// refs counts what can still reach an unpinned record: 1 while the
	// task is live (dropped as the last step of finish) plus 1 per heap
	// object naming it (vmloop's task hook: made, released, heap freed).
	// Wait tokens do not count: the wait word's generation keeps growing
	// across reuse, so a stale token never matches. The drop to 0 puts
	// the record in taskPool for a later spawn (recycle). Bit
	// refRecordCharged is set while the ended record counts in its
	// engine's budget (chargeRecord; set by the live reference's drop,
	// unrefOn); the drop to that bit alone is the last reference too.
	refs atomic.Int32
	// rs holds three bits touched only by the worker running the task
	// (recycle reads rsHostWait after the last unref):
	//
	//   - rsResume: the task suspended on an intrinsic request that must
	//     be completed when it runs again (join, event wait, host call);
	//   - rsVoid, with rsResume: the wait was one the VM loop armed
	//     (vmloop.SigWait: an event wait no timeout bounds), whose request
	//     then completes with no value and needs no dispatcher (begin);
	//   - rsHostWait: set before the token leaves the worker, when the
	//     task armed a wait that completeHost ends: only then can a
	//     completer still hold a token of this life when the record is
	//     reused (recycle).
	rs uint8
	// ended is set (under mu) by finish before the outcome is published;
	// ownLocked then refuses a descriptor (it would never be closed).
	ended bool
	// rhome is the registry list holding t while it is live (registry.go):
	// the worker that spawned it, or the host's list; set by the spawner
	// before t is visible.
	rhome uint16

	// wait is the wait word: generation<<phaseBits | phase (wait.go).
	wait atomic.Uint64

	// tm is the task's timer state (timers.go), nil until it first uses a
	// timer; touched only by the worker running the task (a fired timeout
	// says so in the wait word's phase: phTimedOut).
	tm *taskTimer

	// link is two fields in one word: while t is queued, the next task
	// in the intrusive run queue holding it (qnext; owned by that queue),
	// and while t runs, the worker running it (runner; set by that worker
	// at dispatch and cleared by it, before t becomes visible to other
	// workers: park, requeue, end). A queued task runs on no worker and a
	// running one is in no queue (a worker pops a task, which clears its
	// link, before it runs it, and clears the link before it parks,
	// requeues or ends it), so the two never overlap; nil when t is
	// neither (the record stays in its size class: TestRecordSizes).
	// Once t has ended away from the worker that spawned it, link chains
	// it on that worker's dead stack until it is unlinked (registry.go).
	link unsafe.Pointer
	// rprev, rnext link the task into its home's list in the registry
	// (rhome); changed by the home's owner in its section, or under the
	// list's lock (registry.go).
	rprev, rnext *Task
	// where is the location published at the last slice boundary:
	// function index << 32 | pc (read by introspection without races).
	where atomic.Uint64

	// mu guards outcome publication (except finish's inline fast path),
	// joiners and rare.
	mu sync.Mutex
	// The outcome is written once under mu before state becomes Completed:
	// a Success with a void, i64 or f64 value inline, in the result word
	// of x (vmloop.Exec.KeepResult, KeptResult: no allocation for the
	// common case, and no copy in the record; the word outlives the
	// Exec's release at finish and is cleared only by the Reset of the
	// record's reuse), anything else in rare.outcome.
	joiner1 Token // the first task waiting for completion (no allocation for one joiner)
	// rare holds what few tasks need, made on first use under mu and never
	// dropped, so that the common task record stays small. Atomic: Outcome
	// reads it without the lock while Done may still make it.
	rare atomic.Pointer[taskRare]

	// x is the task's execution state, in the record itself (one
	// allocation per task; the program is x's, names for introspection
	// after the end included). It is run and changed only by the worker
	// running the task; other goroutines touch it only through its atomic
	// stop flag (Cancel, a kick: Exec.Stop, from anywhere, in any state).
	// finish releases its heap (Exec.Recycle or Retire) and keeps its
	// program until the record is reused; a late Cancel's Stop on a reused
	// record costs that task one spurious preemption.
	x vmloop.Exec
}

// qnext is the task after t in the run queue holding it (link).
func (t *Task) qnext() *Task { return (*Task)(t.link) }

// setQnext links n after t in the run queue holding t (link).
func (t *Task) setQnext(n *Task) { t.link = unsafe.Pointer(n) }

// runner is the worker running t (link), nil when t is not running;
// called only by that worker.
func (t *Task) runner() *worker { return (*worker)(t.link) }

// ex returns t's execution state.
func (t *Task) ex() *vmloop.Exec { return &t.x }

// Task.rs bits.
const (
	rsResume uint8 = 1 << iota
	rsVoid
	rsHostWait
)

// Task.flags bits.
const (
	flagCancel uint32 = 1 << iota
	flagPinned
	flagWatched
	// flagStamped: bits stampBits hold the time t became Runnable (set by
	// the enqueuer before t is visible, cleared by the dispatching worker;
	// metrics_lat.go). flagStampWake: a wake made it Runnable.
	flagStamped
	flagStampWake
	// flagStats: t keeps per-task statistics in its rare part (its
	// engine's MetricsConfig.Tasks at spawn; set once, before t is
	// visible).
	flagStats
)

// has reports whether flag f of t is set.
func (t *Task) has(f uint32) bool { return t.flags.Load()&f != 0 }

// taskRare is the part of a task record that few tasks use; guarded by
// the task's mu (outcome is also read lock-free once the task is
// Completed: it is written before the state's Completed CAS).
type taskRare struct {
	outcome *Outcome // an outcome that is not an inline Success
	// outBytes is the share of the engine's memory budget the outcome
	// holds (chargeOutcome), given back when the last reference to the
	// record goes (unref): the task's handles in heaps, or its liveness.
	outBytes atomic.Int64
	// joiners are the further waits for completion (woken once;
	// compacted): tasks' joins, and selects' join cases (tagged entries,
	// ParkJoin).
	joiners waitListOf[evEntry]
	// bcast is what is left to wake of a broadcast the task made (event.go:
	// Event.broadcast, worker.wakeMore); only the worker running it
	// touches it after the broadcast stored it.
	bcast []evEntry
	// spawn is the child record of the spawn the task is stopped at while
	// its arguments are copied in steps (spawn_copy.go); only the worker
	// running the task touches it.
	spawn *Task
	// again: the task's pending request answered ActMore when its last
	// slice ended; it is dispatched again before the task runs (more).
	again bool
	done  chan struct{} // Done's channel, made on first call
	// io is the task's I/O state (io.go), made under mu by its first
	// operation or an owned descriptor, and read without the lock
	// (Task.io). It lives here, not in the record, because every task that
	// does I/O has a rare part anyway: each completion is delivered
	// through hostBits.
	io atomic.Pointer[ioState]
	// The result of a suspended host intrinsic, carried from its completer
	// to the resuming worker (the wake's CAS orders the accesses): an i64
	// inline (hostInline, hostBits: what every I/O completion delivers,
	// with no allocation per operation), anything else in hostResult.
	// hostGen is the generation of the wait it completes.
	hostResult *hostResult
	// hostSpare is a cleared hostResult record kept for the next result
	// that is not an i64 (a channel's message): taking or withdrawing a
	// result keeps its record here, so such completions allocate once per
	// task, not per operation. Nothing else holds a record once it is
	// taken (the completer keeps no pointer to it).
	hostSpare  *hostResult
	hostBits   int64
	hostGen    uint64
	hostInline bool
	closed     bool // done was closed (by finish, or by Done after completion)

	// name is the task's name (SetTaskName, a spawn option; never its
	// spawner's), nil when it has none; replaced whole, read without the
	// lock.
	name atomic.Pointer[string]
	// Per-task statistics, kept only with flagStats (metrics_task.go):
	// written by the worker running the task, read by Tasks at any time.
	slices     atomic.Int64  // dispatches
	runnable   atomic.Int64  // nanoseconds Runnable before those dispatches
	reductions atomic.Uint64 // reductions used, published where a slice ends
}

// rareLocked returns t's rare part, making it (t.mu held).
func (t *Task) rareLocked() *taskRare {
	r := t.rare.Load()
	if r == nil {
		r = &taskRare{}
		t.rare.Store(r)
	}
	return r
}

// io returns t's I/O state, or nil before its first operation. Lock-free:
// the rare part and its io are published atomically and never replaced
// while t lives.
func (t *Task) io() *ioState {
	if r := t.rare.Load(); r != nil {
		return r.io.Load()
	}
	return nil
}

// hasHostResultLocked reports whether a host result is stored for t's
// current wait (t.mu held). One left by an earlier wait's completer that
// lost its wake and has not withdrawn it yet does not count: a completion
// of the current wait replaces it, and nobody takes it.
func (t *Task) hasHostResultLocked() bool {
	r := t.rare.Load()
	return r != nil && (r.hostInline || r.hostResult != nil) && r.hostGen == t.wait.Load()>>phaseBits
}

// spareHostLocked clears the stored result record, if any, and keeps it
// as the spare (t.mu held).
func (r *taskRare) spareHostLocked() {
	if h := r.hostResult; h != nil {
		*h = hostResult{}
		r.hostResult, r.hostSpare = nil, h
	}
}

type hostResult struct {
	value vmloop.Value
	err   *vmloop.Value
	trap  *vmloop.TrapInfo
	// release takes value back when the task never receives it
	// (CompleteHostRelease, DropHostResult).
	release func(vmloop.Value)
}

// ID returns the task's identity (unique within a scheduler).
func (t *Task) ID() uint64 { return t.id }

// Engine returns the engine the task belongs to.
func (t *Task) Engine() *Engine { return t.engine }

// State returns the current scheduling state (a snapshot).
func (t *Task) State() State { return State(t.state.Load()) }

// CancelRequested reports whether cancellation was requested (sticky).
func (t *Task) CancelRequested() bool { return t.has(flagCancel) }

// Outcome returns the outcome and whether the task has completed.
func (t *Task) Outcome() (Outcome, bool) {
	if t.State() != Completed {
		return Outcome{Kind: NoOutcome}, false
	}
	// No lock: the outcome is written before the Running → Completed CAS
	// and never again, and the state load above orders the reads after it.
	if r := t.rare.Load(); r != nil && r.outcome != nil {
		return *r.outcome, true
	}
	return Outcome{Kind: Success, Value: vmloop.ScalarValue(t.x.KeptResult())}, true
}

// InlineOutcome returns the kind and bits of t's result when t has
// completed with a Success of a void, i64 or f64 value (kept in the task
// record: no Outcome is copied); ok is false otherwise (not completed, or
// an outcome Outcome must return).
func (t *Task) InlineOutcome() (k vmloop.Kind, bits uint64, ok bool) {
	if t.State() != Completed {
		return 0, 0, false
	}
	if r := t.rare.Load(); r != nil && r.outcome != nil {
		return 0, 0, false
	}
	k, bits = t.x.KeptResult()
	return k, bits, true
}

// inline reports whether o lives in the task record itself (a Success
// with a void, i64 or f64 value): setOutcome then writes only the result
// word of the record's ended Exec (KeepResult), which nothing else writes
// until the record is reused.
func (o *Outcome) inline() bool {
	if o.Kind != Success {
		return false
	}
	switch o.Value.Kind() {
	case vmloop.KindVoid, vmloop.KindI64, vmloop.KindF64:
		return true
	}
	return false
}

// watch marks t watched (t.mu held; see flagWatched). One locked
// instruction the first time only.
func (t *Task) watch() {
	if !t.has(flagWatched) {
		t.flags.Or(flagWatched)
	}
}

// takeWatchersLocked returns t's joiners and closes its Done channel
// (t.mu held, t Completed).
func (t *Task) takeWatchersLocked() (joiner1 Token, joiners []evEntry) {
	joiner1, t.joiner1 = t.joiner1, Token{}
	if r := t.rare.Load(); r != nil {
		joiners = r.joiners.takeAll()
		if r.done != nil && !r.closed {
			close(r.done)
			r.closed = true
		}
	}
	return joiner1, joiners
}

// setOutcome publishes o before t's Completed transition: under t.mu, or
// without it for an inline outcome (finish).
func (t *Task) setOutcome(o *Outcome, charged int64) {
	if o.Kind == Success {
		switch k := o.Value.Kind(); k {
		case vmloop.KindVoid:
			t.x.KeepResult(k, 0)
			return
		case vmloop.KindI64:
			t.x.KeepResult(k, uint64(o.Value.Int()))
			return
		case vmloop.KindF64:
			t.x.KeepResult(k, math.Float64bits(o.Value.Float()))
			return
		}
	}
	oc := new(Outcome)
	*oc = *o
	r := t.rareLocked()
	r.outcome = oc
	r.outBytes.Store(charged)
}

// Done returns a channel closed when the task completes (for host code;
// allocated lazily, so tasks nobody waits for from Go cost nothing).
func (t *Task) Done() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.watch() // before the look: see finish
	r := t.rareLocked()
	if r.done == nil {
		r.done = make(chan struct{})
		if t.State() == Completed {
			close(r.done)
			r.closed = true
		}
	}
	return r.done
}

// Where returns the function and pc the task published at its last safe
// point: a preemption or suspension (the zero location, the program's
// first function at pc 0, before its first; completion publishes none).
func (t *Task) Where() (fn string, pc int) {
	w := t.where.Load()
	return t.x.Program().FuncName(int(w >> 32)), int(uint32(w))
}

// worker returns the worker running t, or nil when t is nil (a command
// from outside the workers).
func (t *Task) worker() *worker {
	if t == nil {
		return nil
	}
	return t.runner()
}

// Exec returns t's execution state, for the dispatcher (the bus), running
// on the worker that runs t: the only holder of the Control may change a
// task's registers, so a host holding a *Task cannot (S-16).
func (c *Control) Exec(t *Task) *vmloop.Exec { return &t.x }

// Program returns the program t runs (read-only: programs are verified
// and never changed after loading).
func (t *Task) Program() *vmloop.Program { return t.x.Program() }

// traceHook observes transitions in tests (nil otherwise).
var traceHook func(id uint64, from, to State)

// transition moves the state along a legal edge; an illegal edge is a
// scheduler bug and panics (tests check that every illegal edge is refused).
//
// Small enough to inline, so that the edge check folds away where from
// and to are constants (every call site; BenchmarkYieldMany): the trace
// hook and the panics are out of line.
func (t *Task) transition(from, to State) {
	if traceHook == nil && Legal(from, to) {
		if ownEdge(from, to) || from == Running && to == Completed && t.alone() {
			if t.state.Load() != uint32(from) {
				t.badTransition(from, to)
			}
			relstore.Uint32(&t.state, uint32(to))
		} else if !t.state.CompareAndSwap(uint32(from), uint32(to)) {
			t.badTransition(from, to)
		}
		return
	}
	t.tracedTransition(from, to)
}

// alone reports whether nothing but t's liveness names it: refs 1 and not
// pinned (a detached child, BenchmarkChainedSpawn). Then nobody can begin
// to watch t, so its Running → Completed edge needs no compare-and-swap
// (the watched / Completed pair, doc.go, has no other side): a handle
// dropped earlier dropped its count with an atomic add, which this load
// sees, and with it any watch its holder made.
func (t *Task) alone() bool { return t.refs.Load() == 1 && !t.has(flagPinned) }

// ownEdge reports whether only the worker running or dispatching a task
// takes the edge from → to: Runnable → Running (enter) and Running →
// Runnable (requeue). Nobody else moves a Runnable or Running task (a
// waker moves only a Waiting one, after winning its wait word), and no
// store-then-load pair reads these two states (doc.go), so transition
// checks the old state with a load and writes the new one with a release
// store (relstore): a locked instruction fewer per dispatch and per
// requeue (BenchmarkYieldMany). The other edges keep the compare-and-swap.
func ownEdge(from, to State) bool {
	return from == Runnable && to == Running || from == Running && to == Runnable
}

// tracedTransition is transition with the trace hook set, or along an
// illegal edge.
//
//go:noinline
func (t *Task) tracedTransition(from, to State) {
	if traceHook != nil {
		traceHook(t.id, from, to)
	}
	if !Legal(from, to) {
		panic(fmt.Sprintf("sched: illegal transition %s → %s of task %d", from, to, t.id))
	}
	if !t.state.CompareAndSwap(uint32(from), uint32(to)) {
		t.badTransition(from, to)
	}
}

// badTransition panics: t was not in state from.
//
//go:noinline
func (t *Task) badTransition(from, to State) {
	panic(fmt.Sprintf("sched: task %d: transition %s → %s from state %s", t.id, from, to, t.State()))
}
