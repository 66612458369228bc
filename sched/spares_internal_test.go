package sched

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTaskSparesMoveBatches: a worker whose record cache is full gives the
// newest half to the spares in one move, a worker whose cache is empty
// takes a batch from them, every record given is taken once, and spares
// over maxSpareTasks go to taskPool instead.
func TestTaskSparesMoveBatches(t *testing.T) {
	s := &Scheduler{}
	giver, taker := &worker{s: s}, &worker{s: s}
	seen := map[*Task]int{}
	for range taskCacheSize + 1 {
		r := newRecord()
		seen[r] = 0
		r.recycle(giver)
	}
	if len(giver.tasks) != taskCacheSize-taskBatch+1 || len(s.spares.list) != taskBatch || s.spares.n.Load() != taskBatch {
		t.Fatalf("after %d recycles: cache %d, spares %d; want %d and %d", taskCacheSize+1,
			len(giver.tasks), len(s.spares.list), taskCacheSize-taskBatch+1, taskBatch)
	}
	for range taskBatch {
		r := taker.newTask()
		if _, ok := seen[r]; !ok {
			t.Fatal("newTask made a record while the spares held some")
		}
		seen[r]++
	}
	if len(s.spares.list) != 0 || len(taker.tasks) != 0 {
		t.Fatalf("after taking a batch: spares %d, cache %d", len(s.spares.list), len(taker.tasks))
	}
	for len(giver.tasks) > 0 {
		seen[giver.newTask()]++
	}
	for r, n := range seen {
		if n != 1 {
			t.Fatalf("record %p taken %d times", r, n)
		}
	}
	if s.spares.n.Load() != 0 || taker.newTask() == nil {
		t.Fatalf("empty spares count %d", s.spares.n.Load())
	}
	// Bounded: a full spares list sends the next batch to taskPool.
	s.spares.list = make([]*Task, maxSpareTasks)
	s.spares.n.Store(maxSpareTasks)
	for range taskCacheSize + 1 {
		newRecord().recycle(giver)
	}
	if len(s.spares.list) != maxSpareTasks || s.spares.n.Load() != maxSpareTasks || len(giver.tasks) != taskCacheSize-taskBatch+1 {
		t.Fatalf("with full spares: spares %d (max %d), cache %d", len(s.spares.list), maxSpareTasks, len(giver.tasks))
	}
}

// TestTaskSparesTrimAfterACycle: a trim lets go of the records that no
// take reached since the trim before it (the bottom of the list), and
// keeps the rest; a trim after the scheduler ended does nothing and
// reports so.
func TestTaskSparesTrimAfterACycle(t *testing.T) {
	s := &Scheduler{}
	w := &worker{s: s}
	sp := &s.spares
	for range 4 * taskBatch {
		sp.list = append(sp.list, newRecord())
	}
	sp.n.Store(int32(len(sp.list)))
	require.True(t, sp.trim())
	require.Len(t, sp.list, 4*taskBatch, "the first trim starts the cycle")
	back := append([]*Task(nil), sp.list[3*taskBatch:]...) // the first batch taken
	require.True(t, sp.take(&w.tasks))
	require.True(t, sp.take(&w.tasks))
	w.tasks = w.tasks[:taskBatch] // one batch comes back
	sp.give(&w.tasks)
	require.True(t, sp.trim())
	require.Len(t, sp.list, taskBatch, "what no take reached went")
	for i, r := range back {
		require.Same(t, r, sp.list[i], "what came back stays")
	}
	require.EqualValues(t, taskBatch, sp.n.Load())
	require.True(t, sp.trim())
	require.Empty(t, sp.list, "a cycle without a take lets all go")
	sp.done = true
	require.False(t, sp.trim())
}
