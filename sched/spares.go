package sched

import (
	"sync"

	"github.com/jadevm/jade/vmloop"
)

// Spares of execution records: the pool of recycled vmloop.Execs shared
// by the workers, and what each Exec may keep when it is recycled.

// execPool is the last level of Exec recycling, behind each worker's own
// pool and the scheduler's spares: Execs neither could keep, for spawns
// that find both empty and for host spawns. sync.Pool keeps per-P caches
// and empties itself across GCs.
var execPool sync.Pool

// execSpares is the second level of Exec recycling: recycled Execs moved
// between workers a batch at a time. A fan-out's children that run on
// another worker end there, so their Execs pile up in that worker's pool
// while the spawner's runs dry; one worker gives a batch of execBatch
// here under one lock, the other takes one the same way — one lock per
// execBatch tasks where sync.Pool cost a CAS on the other worker's pool
// chain (and its line) for each.
type execSpares struct {
	mu   sync.Mutex
	list []*vmloop.Exec // guarded by mu; at most maxSpareExecs
}

// execBatch is how many Execs move between a worker's pool and the spares
// at a time (half of a worker's pool); maxSpareExecs bounds the spares
// (what does not fit goes to execPool, which the GC empties).
// The spares never shrink (sync.Pool's GC-driven emptying is what they
// avoid), so they are kept small: vmloop.Exec.Recycle bounds what each
// Exec keeps (≈ 17 KiB at most, a few hundred bytes for most tasks).
const (
	execBatch     = execPoolSize / 2
	maxSpareExecs = 8 * execBatch
)

// give moves the newest execBatch Execs of *pool to the spares, or to
// execPool when the spares are full.
func (sp *execSpares) give(pool *[]*vmloop.Exec) {
	p := *pool
	batch := p[len(p)-execBatch:]
	sp.mu.Lock()
	if len(sp.list)+execBatch <= maxSpareExecs {
		sp.list = append(sp.list, batch...)
		batch = nil
	}
	sp.mu.Unlock()
	for _, ex := range batch {
		execPool.Put(ex)
	}
	clear(p[len(p)-execBatch:])
	*pool = p[:len(p)-execBatch]
}

// take moves up to execBatch Execs from the spares to *pool (empty) and
// reports whether it moved any.
func (sp *execSpares) take(pool *[]*vmloop.Exec) bool {
	sp.mu.Lock()
	n := min(execBatch, len(sp.list))
	if n > 0 {
		from := sp.list[len(sp.list)-n:]
		*pool = append(*pool, from...)
		clear(from)
		sp.list = sp.list[:len(sp.list)-n]
	}
	sp.mu.Unlock()
	return n > 0
}
