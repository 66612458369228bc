package sched

import (
	"sync"
	"sync/atomic"
)

// Spares of task records: recycled records (each with its Exec, and what
// the Exec kept of its memory) shared by the workers.

// taskSpares is the second level of record recycling, behind each
// worker's cache (w.tasks) and before taskPool: recycled records moved
// between workers a batch at a time. A fan-out's children that run on
// another worker end there, so their records pile up in that worker's
// cache while the spawner's runs dry; one worker gives a batch of
// taskBatch here under one lock, the other takes one the same way — one
// lock per taskBatch tasks where sync.Pool cost a CAS on the other
// worker's pool chain (and its line) for each.
type taskSpares struct {
	mu   sync.Mutex
	list []*Task // guarded by mu; at most maxSpareTasks
	// n is len(list), stored under mu: take looks at it without the lock
	// and does not lock an empty list (a spawn whose worker's cache is
	// empty asks here first, and most often there is nothing). A take
	// that reads 0 while a give is under way only misses that batch.
	n atomic.Int32
}

// taskBatch is how many records move between a worker's cache and the
// spares at a time (half of a worker's cache); maxSpareTasks bounds the
// spares (what does not fit goes to taskPool, which the GC empties).
// The spares never shrink (sync.Pool's GC-driven emptying is what they
// avoid), so they are kept small: vmloop.Exec.Recycle bounds what each
// record's Exec keeps (≈ 17 KiB at most, a few hundred bytes for most
// tasks).
const (
	taskBatch     = taskCacheSize / 2
	maxSpareTasks = 8 * taskBatch
)

// give moves the newest taskBatch records of *pool to the spares, or to
// taskPool when the spares are full.
func (sp *taskSpares) give(pool *[]*Task) {
	p := *pool
	batch := p[len(p)-taskBatch:]
	sp.mu.Lock()
	if len(sp.list)+taskBatch <= maxSpareTasks {
		sp.list = append(sp.list, batch...)
		sp.n.Store(int32(len(sp.list)))
		batch = nil
	}
	sp.mu.Unlock()
	for _, t := range batch {
		poolTask(t)
	}
	clear(p[len(p)-taskBatch:])
	*pool = p[:len(p)-taskBatch]
}

// take moves up to taskBatch records from the spares to *pool (empty) and
// reports whether it moved any.
func (sp *taskSpares) take(pool *[]*Task) bool {
	if sp.n.Load() == 0 {
		return false
	}
	sp.mu.Lock()
	n := min(taskBatch, len(sp.list))
	if n > 0 {
		from := sp.list[len(sp.list)-n:]
		*pool = append(*pool, from...)
		clear(from)
		sp.list = sp.list[:len(sp.list)-n]
		sp.n.Store(int32(len(sp.list)))
	}
	sp.mu.Unlock()
	return n > 0
}
