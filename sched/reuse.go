package sched

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/jadevm/jade/internal/relstore"
	"github.com/jadevm/jade/internal/vmhook"
	"github.com/jadevm/jade/vmloop"
)

// Reuse of task records (sched/doc.go, "Record reuse"): a record is
// counted while its task is live and once per heap object naming it
// (vmloop reports those through vmhook.TaskRefs); at zero it goes back to
// taskPool.

func init() {
	vmhook.TaskRefs = taskRef
	vmhook.TaskDrop = taskDrop
}

// taskDrop is vmloop's task hook for a reference dropped by the heap of
// holder, the Exec of a task record (Exec.MarkTaskRecord): a last
// reference dropped while that task runs (a FREE) recycles the record on
// its worker, into that worker's cache (spawn + join frees each child
// there, and a task's end frees what its heap held into its worker's
// cache: leave keeps the runner until the Exec is released). holder runs
// on the calling goroutine (or ends there), so its runner is stable and
// it is in no run queue; a host-held record released later has none.
func taskDrop(obj any, holder any) {
	t, ok := obj.(*Task)
	if !ok {
		return
	}
	t.unrefOn(recordOf(holder.(*vmloop.Exec)).runner(), -1)
}

// recordOf returns the task record whose Exec is x (x must be marked:
// Exec.MarkTaskRecord, which only newTask does).
func recordOf(x *vmloop.Exec) *Task {
	return (*Task)(unsafe.Add(unsafe.Pointer(x), -int(unsafe.Offsetof(Task{}.x))))
}

// taskPool holds task records nothing refers to any more (recycle), for
// Prepare: a spawn from a task allocates no record in the steady state.
var taskPool sync.Pool

// tasksMade counts the records Prepare allocated, and tasksPooled those
// that went to taskPool (tests).
var tasksMade, tasksPooled atomic.Uint64

// taskRef is vmloop's task hook: a heap object naming the task was made
// (+1) or dropped (-1), or the task left a heap as a Value (0: pin it).
func taskRef(obj any, delta int) {
	t, ok := obj.(*Task)
	if !ok {
		return
	}
	switch {
	case delta > 0:
		t.refs.Add(1)
	case delta < 0:
		t.unref()
	default:
		if t.flags.Or(flagPinned)&flagPinned == 0 && State(t.state.Load()) == Completed {
			// Pinned after its end: finish kept its Exec for a next life
			// it will not have (releaseExec), with spare task reference
			// slots that nothing would give back.
			t.dropLateSlots()
		}
	}
}

// lateMu serializes dropLateSlots: a record pinned while its task ends
// is looked at by the pinner and by finish, either or both.
var lateMu sync.Mutex

// dropLateSlots gives back the spare task reference slots of a record
// pinned after releaseExec kept its Exec (pinned: it is never reused, and
// its Exec is touched by nobody else now).
func (t *Task) dropLateSlots() {
	lateMu.Lock()
	t.x.DropTaskRefSlots()
	lateMu.Unlock()
}

// unref drops one reference; the last one recycles an unpinned record.
func (t *Task) unref() { t.unrefOn(nil, -1) }

// unrefOn is unref by worker w (nil: anyone else), which keeps a record
// it recycles in its own cache (w.tasks) rather than in taskPool. d is
// -1, or finish's drop of the live reference of a record chargeRecord
// counted (liveDrop: the charged mark and the drop in one add).
func (t *Task) unrefOn(w *worker, d int32) {
	var n int32
	if d == -1 && t.alone() {
		// The last reference, and no other can come: only a holder of
		// one makes another, and the registry's walkers take theirs
		// while the task is live (listed). A store, not a locked add
		// (BenchmarkChainedSpawn).
		relstore.Int32(&t.refs, 0)
	} else if d == -1 && t.refs.Load() == refRecordCharged+1 && t.refs.CompareAndSwap(refRecordCharged+1, 0) {
		// The last handle of an ended record (chargeRecord): one locked
		// instruction where an add and a store took two.
		t.engine.mem.Give(t.heldBytes())
	} else if n = t.refs.Add(d); n == refRecordCharged {
		// The same, the mark's add racing the last handle's drop.
		if !t.clearCharged() {
			return // a handle came: its drop ends the record
		}
		n = 0
	}
	if n == 0 {
		if r := t.rare.Load(); r != nil {
			t.engine.mem.Give(r.outBytes.Swap(0))
		}
		if !t.has(flagPinned) {
			t.recycle(w)
		}
	}
}

// clearCharged clears the charged mark of t, found alone in its count by
// a drop's add, and gives the record's bytes back; false when a handle
// came meanwhile. A compare-and-swap, not a store: a pinned record gains
// handles from its exported Values, which count no reference, so one may
// come between the add and the clear (and go again, clearing the mark
// and giving the bytes back itself); a store would wipe it and give the
// record's bytes back twice (TestChargedRecordGivenOnce). Out of line: a
// rare path of unrefOn, which is inlined where references drop.
//
//go:noinline
func (t *Task) clearCharged() bool {
	if unrefRaceHook != nil {
		unrefRaceHook(t)
	}
	if !t.refs.CompareAndSwap(refRecordCharged, 0) {
		return false
	}
	t.engine.mem.Give(t.heldBytes())
	return true
}

// unrefRaceHook, when set (tests), runs where clearCharged has not cleared
// the mark yet: the window in which a handle made from a pinned record's
// Value may come and go.
var unrefRaceHook func(t *Task)

// taskCacheSize bounds a worker's cache of recycled task records (w.tasks;
// a full cache gives half of itself to the spares).
const taskCacheSize = 256

// newTask returns a cleared record for a spawn by w (nil: the host): from
// w's cache (owner only: no lock and no sync.Pool pin), else a batch from
// the spares, else from taskPool, else a new one.
func (w *worker) newTask() *Task {
	if w != nil {
		if n := len(w.tasks); n > 0 || w.s.spares.take(&w.tasks) {
			n = len(w.tasks)
			t := w.tasks[n-1]
			w.tasks[n-1] = nil
			w.tasks = w.tasks[:n-1]
			return t
		}
	}
	t, _ := taskPool.Get().(*Task)
	if t == nil {
		t = new(Task)
		t.x.MarkTaskRecord()
		tasksMade.Add(1)
	}
	return t
}

// recycle clears a record nothing refers to and pools it. Under mu when
// the task armed a host wait in this life: a stale completer (completeHost
// with a token of this life) may still lock it and read the rare part; it
// finds the wait generation moved on. Tokens of earlier lives were made
// stale under mu when those ended, and every other waker only CASes the
// wait word: without a host wait, nothing else can touch the record, and
// the lock (two locked instructions per task) is skipped.
//
// w is the worker recycling t, owner of its cache, or nil.
func (t *Task) recycle(w *worker) {
	host := t.rs&rsHostWait != 0
	if host {
		t.mu.Lock()
	}
	if w := t.wait.Load(); w&phaseMask != phIdle {
		// A wait this life did not end (it ended armed, parked or with a
		// wake it did not take): the generation moves on, so that no
		// token of it wins anything in the next life. An idle word needs
		// nothing: a token wins only an armed or parked phase of its own
		// generation, and the next life's first arm moves the generation
		// on (a locked store fewer per task, BenchmarkSpawnJoin).
		t.wait.Store((w>>phaseBits + 1) << phaseBits)
	}
	t.id, t.engine = 0, nil
	// Its memory stays for the next spawn (Exec.Recycle), and the inline
	// outcome in its result word goes with that spawn's Reset.
	t.x.DropProgram()
	t.rs, t.ended = 0, false
	t.tm, t.link, t.rprev, t.rnext = nil, nil, nil, nil
	t.joiner1 = Token{}
	// Atomic stores cost a locked instruction each: only where needed.
	// flags holds no flagPinned here (a pinned record is never recycled):
	// this clears flagCancel, flagWatched and flagStats (a stamp is
	// cleared at dispatch, and every task ends Running). rare takes the I/O state
	// with it.
	if t.flags.Load() != 0 {
		t.flags.Store(0)
	}
	if t.rare.Load() != nil {
		t.rare.Store(nil)
	}
	if t.where.Load() != 0 {
		t.where.Store(0)
	}
	// A plain store: nothing reads the state of a record that no
	// reference reaches (wakers hold tokens, whose generation the wait
	// word checks before they touch it), and Launch publishes the next
	// life's (a locked store fewer per task, BenchmarkSpawnJoin).
	*(*uint32)(unsafe.Pointer(&t.state)) = uint32(Runnable)
	if host {
		t.mu.Unlock()
	}
	if w != nil {
		if len(w.tasks) == taskCacheSize {
			w.s.spares.give(&w.tasks)
		}
		w.tasks = append(w.tasks, t)
		return
	}
	poolTask(t)
}

// poolTask puts a cleared record in taskPool, which the garbage collector
// may empty: its Exec's spare task reference slots go back to vmloop's
// table first (a record in a worker's cache or the spares keeps them).
func poolTask(t *Task) {
	tasksPooled.Add(1)
	t.x.DropTaskRefSlots()
	taskPool.Put(t)
}
