package sched

import (
	"testing"

	"github.com/jadevm/jade/vmloop"
)

// TestExecSparesMoveBatches: a worker whose pool is full gives the newest
// half to the spares in one move, a worker whose pool is empty takes a
// batch from them, every Exec given is taken once, and spares over
// maxSpareExecs go to execPool instead.
func TestExecSparesMoveBatches(t *testing.T) {
	s := &Scheduler{}
	giver, taker := &worker{s: s}, &worker{s: s}
	seen := map[*vmloop.Exec]int{}
	for range execPoolSize + 1 {
		ex := new(vmloop.Exec)
		seen[ex] = 0
		giver.putExec(ex)
	}
	if len(giver.execs) != execPoolSize-execBatch+1 || len(s.spares.list) != execBatch {
		t.Fatalf("after %d puts: pool %d, spares %d; want %d and %d", execPoolSize+1,
			len(giver.execs), len(s.spares.list), execPoolSize-execBatch+1, execBatch)
	}
	for range execBatch {
		ex := taker.takeExec()
		if _, ok := seen[ex]; !ok {
			t.Fatal("takeExec made an Exec while the spares held some")
		}
		seen[ex]++
	}
	if len(s.spares.list) != 0 || len(taker.execs) != 0 {
		t.Fatalf("after taking a batch: spares %d, pool %d", len(s.spares.list), len(taker.execs))
	}
	for len(giver.execs) > 0 {
		seen[giver.takeExec()]++
	}
	for ex, n := range seen {
		if n != 1 {
			t.Fatalf("Exec %p taken %d times", ex, n)
		}
	}
	// Bounded: a full spares list sends the next batch to execPool.
	s.spares.list = make([]*vmloop.Exec, maxSpareExecs)
	for range execPoolSize + 1 {
		giver.putExec(new(vmloop.Exec))
	}
	if len(s.spares.list) != maxSpareExecs || len(giver.execs) != execPoolSize-execBatch+1 {
		t.Fatalf("with full spares: spares %d (max %d), pool %d", len(s.spares.list), maxSpareExecs, len(giver.execs))
	}
}
