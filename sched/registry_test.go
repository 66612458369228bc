package sched_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// regFanOut is fanOutMain with children that each loop a while (so that
// idle workers steal some); wait parks on an event until it is
// signalled.
const regFanOut = fanOutMain + `
.func child(x:i64) -> i64
  .local k:i64
  const k, 0
w:
  jgei  k, 200, out
  addi  k, k, 1
  jmp   w
out:
  ret   x
.end
.func wait(ev:ref) -> i64
  .local z:i64
  evwait ev
  const z, 0
  ret   z
.end
`

// crossEnds is how many tasks ended away from the worker that spawned
// them, as far as the lists' counts tell (a worker's ends beyond its own
// adds).
func crossEnds(hs []sched.RegistryHome) uint64 {
	var n uint64
	for _, h := range hs[:len(hs)-1] {
		if h.Ends > h.Adds {
			n += h.Ends - h.Adds
		}
	}
	return n
}

// TestRegistryEndsElsewhere: tasks that end on a worker other than the
// one that spawned them (stolen children of a fan-out) leave the
// registry's lists once they have ended, with every worker then idle and
// parked: their home unlinks them between picks, or, once it is about to
// park, whoever ends one does (the failure it guards against: ended
// tasks held in a parked worker's list, their records never reused).
func TestRegistryEndsElsewhere(t *testing.T) {
	testkit.Workers(t, []int{2, 4}, func(t *testing.T, workers int) {
		rt := testkit.Runtime(t, jade.Options{Workers: workers})
		p := testkit.Load(t, rt, regFanOut)
		s := hostbus.Scheduler(rt)
		n := int64(4000)
		want := n * (n - 1) / 2
		var cross uint64
		for round := 0; round < 20 && cross == 0 || round < 3; round++ {
			o := testkit.Run(t, rt, p, "main", vmloop.I64(n))
			require.Equal(t, sched.Success, o.Kind, "%v", o)
			require.Equal(t, want, o.Value.Int())
			testkit.WaitFor(t, func() bool {
				hs := s.RegistryHomes()
				for _, h := range hs {
					if h.Linked != 0 || h.Dead != 0 {
						return false
					}
				}
				cross = crossEnds(hs)
				return s.LiveTasks() == 0
			})
		}
		require.Positive(t, cross, "no task ended away from its spawner's worker in 20 fan-outs of %d", n)
		t.Logf("%d workers: %d tasks ended away from their spawner's worker", workers, cross)
	})
}

// TestRegistryWalkRaces: task dumps walk the registry's lists, revoking
// each owner's bias, while every worker spawns and ends tasks on its own
// list and on others' (a fan-out), and a set of tasks stays parked: each
// walk sees every parked task exactly once, and the lists are empty once
// everything has ended (under -race: the walk and the owners' plain
// stores are ordered).
func TestRegistryWalkRaces(t *testing.T) {
	testkit.Workers(t, []int{2, 4}, func(t *testing.T, workers int) {
		rt := testkit.Runtime(t, jade.Options{Workers: workers})
		p := testkit.Load(t, rt, regFanOut)
		s := hostbus.Scheduler(rt)
		ev := rt.NewEvent()
		const parked = 64
		ids := map[uint64]bool{}
		for range parked {
			h, err := rt.Spawn(p, "wait", ev)
			require.NoError(t, err)
			ids[h.ID()] = true
		}
		testkit.WaitFor(t, func() bool { return s.WaitingTasks() == parked })
		var stop atomic.Bool
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				o := testkit.Run(t, rt, p, "main", vmloop.I64(500))
				if o.Kind != sched.Success {
					t.Errorf("fan-out: %v", o)
					return
				}
			}
		}()
		walks := 200
		if testing.Short() {
			walks = 50
		}
		for range walks {
			seen := map[uint64]int{}
			for _, r := range s.Tasks() {
				seen[r.ID]++
			}
			for id := range ids {
				require.Equal(t, 1, seen[id], "parked task %d in a walk", id)
			}
		}
		stop.Store(true)
		wg.Wait()
		require.NoError(t, rt.Broadcast(ev))
		testkit.WaitFor(t, func() bool {
			for _, h := range s.RegistryHomes() {
				if h.Linked != 0 || h.Dead != 0 {
					return false
				}
			}
			return s.LiveTasks() == 0
		})
	})
}
