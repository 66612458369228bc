package sched

import (
	"runtime"
	"sync"
	"sync/atomic"
	"weak"
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
//
// The spares hold what a burst of tasks left (a 10k fan-out's records,
// BenchmarkSpawnMany) for the next burst, as sync.Pool would, and give
// back what the burst no longer uses as sync.Pool does: after each
// garbage collection (trim, armed by watchSpares) the records that
// stayed in the list through the whole cycle since the last one go.
type taskSpares struct {
	mu   sync.Mutex
	list []*Task // guarded by mu; at most maxSpareTasks
	// n is len(list), stored under mu: take looks at it without the lock
	// and does not lock an empty list (a spawn whose worker's cache is
	// empty asks here first, and most often there is nothing). A take
	// that reads 0 while a give is under way only misses that batch.
	n atomic.Int32
	// low is the least len(list) since the last trim (under mu): the
	// bottom low records were not taken in the cycle (take pops the top).
	low int
	// done: the scheduler has ended (dropRecordSlots); trim stops (mu).
	done bool
}

// taskBatch is how many records move between a worker's cache and the
// spares at a time (half of a worker's cache); maxSpareTasks bounds the
// spares between two collections (what does not fit goes to taskPool).
// vmloop.Exec.Recycle bounds what each record's Exec keeps (≈ 17 KiB at
// most, a few hundred bytes for most tasks).
const (
	taskBatch     = taskCacheSize / 2
	maxSpareTasks = 128 * taskBatch
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
		sp.low = min(sp.low, len(sp.list))
	}
	sp.mu.Unlock()
	return n > 0
}

// trim lets the records that no take reached since the last trim go to
// the garbage collector (their Execs' spare task reference slots back to
// vmloop's table first), and reports whether the spares are still in use
// (false once the scheduler has ended).
func (sp *taskSpares) trim() bool {
	sp.mu.Lock()
	if sp.done {
		sp.mu.Unlock()
		return false
	}
	old := sp.list[:min(sp.low, len(sp.list))]
	if len(old) > 0 {
		// The rest in an array of their own: the burst's goes with old.
		sp.list = append([]*Task(nil), sp.list[len(old):]...)
		sp.n.Store(int32(len(sp.list)))
	}
	sp.low = len(sp.list)
	sp.mu.Unlock()
	for _, t := range old {
		t.x.DropTaskRefSlots()
	}
	return true
}

// watchSpares trims s's spares after each garbage collection: a sentinel
// object's cleanup runs after the cycle that found it unreachable, trims
// and arms the next. It holds s weakly, so a scheduler nobody ended is
// still collected, and it stops once s has ended.
func watchSpares(s *Scheduler) {
	ws := weak.Make(s)
	var arm func()
	arm = func() {
		sentinel := new([16]byte) // 16 B: not the tiny allocator's (a cleanup on it may never run)
		runtime.AddCleanup(sentinel, func(ws weak.Pointer[Scheduler]) {
			if s := ws.Value(); s != nil && s.spares.trim() {
				arm()
			}
		}, ws)
	}
	arm()
}
