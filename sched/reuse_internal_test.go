package sched

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
)

// TestWorkerTaskCache: a record whose last reference a worker drops goes
// to that worker's cache, cleared, and is the next record its spawns
// take; the cache holds at most taskCacheSize (a full one gives half of
// itself to the spares: TestTaskSparesMoveBatches), and a pinned record
// is never cached.
func TestWorkerTaskCache(t *testing.T) {
	w := &worker{s: &Scheduler{}}
	recs := make([]*Task, taskCacheSize)
	for i := range recs {
		r := newRecord()
		r.id = uint64(i + 1)
		r.refs.Store(1)
		r.flags.Or(flagWatched)
		r.state.Store(uint32(Completed))
		recs[i] = r
		r.unrefOn(w, -1)
	}
	require.Len(t, w.tasks, taskCacheSize)
	for i := taskCacheSize - 1; i >= 0; i-- {
		r := w.newTask()
		require.Same(t, recs[i], r, "the newest cached record is taken first")
		require.Zero(t, r.id)
		require.Zero(t, r.flags.Load())
		require.Equal(t, Runnable, r.State())
	}
	require.Empty(t, w.tasks)

	p := newRecord()
	p.refs.Store(1)
	p.flags.Or(flagPinned)
	p.unrefOn(w, -1)
	require.Empty(t, w.tasks, "a pinned record is never reused")

	// The host (no worker) and unref from a heap's hook use taskPool.
	h := newRecord()
	h.refs.Store(1)
	h.unref()
	require.Empty(t, w.tasks)
}

// TestTaskDropRecyclesOnWorker: a task reference dropped by a running
// task's heap (vmloop's TaskDrop hook, with the holder's Exec) recycles a
// record it was the last reference of into the cache of the worker
// running the holder; without a worker (the holder is not running) it
// goes to taskPool.
func TestTaskDropRecyclesOnWorker(t *testing.T) {
	w := &worker{s: &Scheduler{}}
	holder := w.newTask()
	holder.link = unsafe.Pointer(w)
	require.Same(t, holder, recordOf(holder.ex()))
	child := newRecord()
	child.refs.Store(1) // ended: the holder's reference is the last
	child.state.Store(uint32(Completed))
	taskDrop(child, holder.ex())
	require.Equal(t, []*Task{child}, w.tasks, "recycled on the holder's worker")

	holder.link = nil
	other := newRecord()
	other.refs.Store(1)
	other.state.Store(uint32(Completed))
	taskDrop(other, holder.ex())
	require.Equal(t, []*Task{child}, w.tasks, "no worker: taskPool")
}

// newRecord is a task record as newTask makes one (marked: its Exec is a
// record's), so that the records these tests put in taskPool are like
// the scheduler's own when a later test's spawn takes one.
func newRecord() *Task {
	t := new(Task)
	t.x.MarkTaskRecord()
	return t
}

// TestChargedRecordGivenOnce: a pinned record that ended with a handle
// (chargeRecord counted it) gains a handle from one of its exported
// Values, which counts no reference, and loses it again, just as the
// live reference's drop finds only the charged mark left (the window of
// unrefRaceHook): the record's bytes are given back once, by whichever
// drop clears the mark, and its count ends at zero.
func TestChargedRecordGivenOnce(t *testing.T) {
	e := &Engine{mem: vmloop.NewBudget(1 << 30)}
	r := newRecord()
	r.engine = e
	r.flags.Or(flagPinned)
	r.refs.Store(2) // live, and a handle
	d := r.chargeRecord()
	require.Equal(t, r.heldBytes(), e.mem.Used())
	r.unrefOn(nil, -1) // the handle goes first
	require.Equal(t, r.heldBytes(), e.mem.Used(), "given back before the live reference went")

	came := false
	unrefRaceHook = func(x *Task) {
		unrefRaceHook = nil
		x.refs.Add(1) // a handle imported from an exported Value
		came = true
		x.unrefOn(nil, -1) // and dropped
	}
	defer func() { unrefRaceHook = nil }()
	r.unrefOn(nil, d) // the live reference, with the mark
	require.True(t, came)
	require.Zero(t, e.mem.Used(), "the record's bytes given back once")
	require.Zero(t, r.refs.Load())
}

// TestRecycleEndsAnUnendedWait: a record whose last life left its wait
// armed gets a new generation at recycle, so that life's token wins
// nothing in the next one; a record whose wait ended (idle) keeps its
// word, and the next life's first arm moves the generation on all the
// same. Either way the old token never wakes the new life.
func TestRecycleEndsAnUnendedWait(t *testing.T) {
	for _, ended := range []bool{false, true} {
		rec := new(Task)
		rec.state.Store(uint32(Completed))
		old := rec.arm()
		if ended {
			rec.disarm()
		}
		before := rec.wait.Load()
		rec.recycle(&worker{}) // into a cache of its own, not taskPool: the arms below must not reach another test's spawn
		if ended {
			require.Equal(t, before, rec.wait.Load(), "an idle word is left as it is")
		} else {
			require.Equal(t, (old.gen+1)<<phaseBits|phIdle, rec.wait.Load(), "an armed word moves on")
		}
		require.Equal(t, Runnable, rec.State())
		require.False(t, old.live())
		woke, _ := old.wakeAs(phWoken)
		require.False(t, woke, "the old token wakes nothing before the next arm")
		now := rec.arm() // the next life's first wait
		require.Greater(t, now.gen, old.gen)
		woke, _ = old.wakeAs(phWoken)
		require.False(t, woke, "nor after it")
		require.True(t, now.live())
	}
}
