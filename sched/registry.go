package sched

import (
	"slices"

	"github.com/jadevm/jade/internal/tinylock"
)

// The registry of live tasks, sharded by id.

// registry tracks live tasks in sharded intrusive lists (Task.rprev,
// Task.rnext) so that spawn and completion touch one small lock and cost no
// allocation. The lock is a tinylock: an add or a remove holds it for a
// few stores, and its unlock is a plain store where sync.Mutex's is a
// locked add (two locked instructions fewer per spawn + end,
// BenchmarkChainedSpawn). The draining / registry pair (doc.go) still
// holds: Drain counts under every shard's lock, whose compare-and-swap
// orders it against each remove. Each shard also counts its tasks: the
// scheduler's live count is their sum (no counter of its own for every
// spawn and completion to update from every worker).
type registry struct {
	shards [registryShards]struct {
		mu   tinylock.Mutex
		head *Task // guarded by mu
		n    int64 // tasks in the list; guarded by mu
		_    [cacheLinePad - 24]byte
	}
}

const registryShards = 16

func (r *registry) add(t *Task) {
	sh := &r.shards[t.id%registryShards]
	sh.mu.Lock()
	t.rnext = sh.head
	if sh.head != nil {
		sh.head.rprev = t
	}
	sh.head = t
	sh.n++
	sh.mu.Unlock()
}

func (r *registry) remove(t *Task) {
	sh := &r.shards[t.id%registryShards]
	sh.mu.Lock()
	if t.rprev != nil {
		t.rprev.rnext = t.rnext
	} else {
		sh.head = t.rnext
	}
	if t.rnext != nil {
		t.rnext.rprev = t.rprev
	}
	t.rprev, t.rnext = nil, nil
	sh.n--
	sh.mu.Unlock()
}

// count returns the number of registered tasks, with every shard locked
// at once: exact. (Shard by shard it could miss a child registered in a
// shard already read while its spawner left one not read yet, and read 0
// with a task live.) A task is registered (Launch) before the task that
// spawned it can complete, so while any task is live one is registered.
func (r *registry) count() int64 {
	for i := range r.shards {
		r.shards[i].mu.Lock()
	}
	var n int64
	for i := range r.shards {
		n += r.shards[i].n
	}
	for i := range r.shards {
		r.shards[i].mu.Unlock()
	}
	return n
}

func (r *registry) each(f func(*Task)) {
	var ts []*Task
	for i := range r.shards {
		sh := &r.shards[i]
		// Room first, outside the lock: a spawn or an end on this shard
		// spins while the walk holds it.
		sh.mu.Lock()
		n := sh.n
		sh.mu.Unlock()
		ts = slices.Grow(ts, int(n)+16)
		sh.mu.Lock()
		for t := sh.head; t != nil; t = t.rnext {
			t.refs.Add(1) // live here, so not yet reusable: keep it so
			ts = append(ts, t)
		}
		sh.mu.Unlock()
	}
	for _, t := range ts {
		f(t)
		t.unref()
	}
}
