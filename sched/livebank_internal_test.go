package sched

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
)

func bankEngine(workers int, lim int64) (*Engine, []*worker) {
	e := &Engine{name: "banks", banks: make([]liveBank, workers)}
	cfg := EngineRuntimeConfig{Limits: ResourceLimits{LiveTasks: lim}}
	e.cfg.Store(&cfg)
	ws := make([]*worker, workers)
	for i := range ws {
		ws[i] = &worker{id: i}
	}
	return e, ws
}

// TestLiveBanksKeepTheLimitExact: with credits banked on workers, exactly
// lim spawns succeed whichever worker makes them (a worker whose bank is
// dry takes back the others' unused credits before it refuses), the
// refusal wraps ErrLimit, and LiveTasks counts tasks, not credits.
func TestLiveBanksKeepTheLimitExact(t *testing.T) {
	const lim = 5 * liveBatch // banking while a batch per worker and one more fit
	e, ws := bankEngine(2, lim)
	// Each worker refills once: every credit is taken, most sit in banks.
	for _, w := range ws {
		require.NoError(t, e.reserveLive(w))
	}
	if got := e.LiveTasks(); got != 2 {
		t.Fatalf("LiveTasks %d after 2 spawns", got)
	}
	for i := 2; i < lim; i++ {
		require.NoError(t, e.reserveLive(ws[0]), "spawn %d of %d on worker 0 (worker 1's bank holds %d)", i+1, lim, e.banks[1].n)
	}
	err := e.reserveLive(ws[1])
	if !errors.Is(err, ErrLimit) {
		t.Fatalf("spawn %d: %v, want ErrLimit", lim+1, err)
	}
	if got := e.LiveTasks(); got != lim {
		t.Fatalf("LiveTasks %d at the limit, want %d", got, lim)
	}
	for range lim {
		e.releaseLive(ws[1])
	}
	if got := e.LiveTasks(); got != 0 || e.live != 0 {
		t.Fatalf("after every completion: LiveTasks %d, live %d, banks %d+%d", got, e.live, e.banks[0].n, e.banks[1].n)
	}
	// A lowered limit: closing the banks (UpdateEngine) leaves no credit
	// banked.
	require.NoError(t, e.reserveLive(ws[0])) // a refill
	e.liveMu.Lock()
	e.closeBanksLocked()
	live := e.live
	e.liveMu.Unlock()
	require.EqualValues(t, 1, live, "live after closing the banks with one task")
}

// TestLiveBanksNeverPassTheLimit: workers spawning and completing at once
// (and the host, without a bank) never have more than lim tasks live, and
// the count returns to zero.
func TestLiveBanksNeverPassTheLimit(t *testing.T) {
	const lim, workers, rounds = 8*liveBatch + 5, 4, 20000
	e, ws := bankEngine(workers, lim)
	ws = append(ws, nil) // the host
	var live, refused atomic.Int64
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			held := 0
			for i := range rounds {
				if i%3 != 2 {
					if e.reserveLive(w) != nil {
						refused.Add(1)
						continue
					}
					if n := live.Add(1); n > lim {
						t.Errorf("%d tasks live, limit %d", n, lim)
						return
					}
					held++
				} else if held > 0 {
					live.Add(-1)
					e.releaseLive(w)
					held--
				}
			}
			for ; held > 0; held-- {
				live.Add(-1)
				e.releaseLive(w)
			}
		}()
	}
	wg.Wait()
	if refused.Load() == 0 {
		t.Error("no spawn was refused: the test never reached the limit")
	}
	if got := e.LiveTasks(); got != 0 {
		t.Fatalf("LiveTasks %d after every task ended", got)
	}
}

// TestLiveTasksNeverUndercounts: Engine.LiveTasks read while a worker
// refills its bank (live first, then the bank) never misses a live task
// (the failure it guards against: reading live and the banks once each read 0 here).
func TestLiveTasksNeverUndercounts(t *testing.T) {
	const lim = 1 << 20
	zero := 0
	for range 2000 {
		e, ws := bankEngine(1, lim)
		if err := e.reserveLive(nil); err != nil { // a host task stays live
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range 64 {
				e.reserveLive(ws[0])
			}
		}()
	poll:
		for {
			select {
			case <-done:
				break poll
			default:
			}
			if e.LiveTasks() == 0 {
				zero++
			}
		}
	}
	if zero > 0 {
		t.Fatalf("LiveTasks read 0 %d times with a task live", zero)
	}
}

// TestLoweredLimitHoldsAfterUpdate: once UpdateEngine has lowered the
// liveTasks limit below the live count, no spawn that starts afterwards
// succeeds, even where a refill raced the update (the failure it guards against: a refill
// under the old limit banked 31 credits that later spawns used).
func TestLoweredLimitHoldsAfterUpdate(t *testing.T) {
	for range 300 {
		s, c, err := New(Config{Dispatcher: nopDispatcher{}, Workers: 2})
		require.NoError(t, err)
		e, err := c.RegisterEngine("e", EngineRuntimeConfig{Limits: ResourceLimits{LiveTasks: 1 << 20}})
		require.NoError(t, err)
		var updated atomic.Bool
		var late atomic.Int64
		var wg sync.WaitGroup
		for _, w := range s.workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 2000 {
					after := updated.Load()
					if e.reserveLive(w) == nil && after {
						late.Add(1)
					}
				}
			}()
		}
		for e.LiveTasks() < 64 {
			runtime.Gosched()
		}
		require.NoError(t, c.UpdateEngine(e, EngineRuntimeConfig{Limits: ResourceLimits{LiveTasks: 1}}))
		updated.Store(true)
		wg.Wait()
		if n := late.Load(); n > 0 {
			t.Fatalf("%d spawns succeeded after the limit was lowered to 1 below %d live tasks", n, e.LiveTasks())
		}
	}
}

// TestBankedPlacesServeConcurrentSpawns: with the engine's count full and
// free places only in other workers' banks, spawns made at once on
// workers with empty banks (and by the host) all succeed while the banks
// hold a place for each (the failure it guards against: two such spawns both
// reclaimed, one got every credit and the other was refused below the
// limit).
func TestBankedPlacesServeConcurrentSpawns(t *testing.T) {
	for _, workers := range []int{2, 4, 8} { // 1: no other worker to bank
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			bankers := workers - 1 // workers 0..bankers-1 bank; the last and the host spawn
			refused := 0
			for range 500 {
				lim := int64(liveBatch*(workers+1) + 8)
				e, ws := bankEngine(workers, lim)
				for _, w := range ws[:bankers] {
					require.NoError(t, e.reserveLive(w)) // a refill: liveBatch-1 banked
				}
				for range lim - int64(liveBatch*bankers) {
					require.NoError(t, e.reserveLive(nil)) // the host fills the count
				}
				var wg sync.WaitGroup
				var fails, ready atomic.Int64
				spawners := []*worker{ws[bankers], nil}
				for _, w := range spawners {
					wg.Add(1)
					go func() {
						defer wg.Done()
						// Both start at once: the last one ready lets them go.
						ready.Add(1)
						for ready.Load() < int64(len(spawners)) {
							runtime.Gosched()
						}
						if e.reserveLive(w) != nil {
							fails.Add(1)
						}
					}()
				}
				wg.Wait()
				refused += int(fails.Load())
			}
			require.Zero(t, refused, "%d workers: spawns refused with places banked on other workers", workers)
		})
	}
}

// TestLiveTasksNeverMissesALiveTask: Engine.LiveTasks read while tasks
// are spawned on one worker and complete on another (places move from
// bank to bank, refills and batch returns change the engine's count)
// never reads 0 with a host task live the whole time (the failure it guards against:
// a read could take one bank before a spawn and another after the
// spawned task's completion, and a refill on one worker with a batch
// return on another left the engine's count as it was between the two
// loads that were to prove the banks were read at one moment).
func TestLiveTasksNeverMissesALiveTask(t *testing.T) {
	for _, workers := range []int{1, 2, 4, 8} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			e, ws := bankEngine(workers, 1<<20)
			require.NoError(t, e.reserveLive(nil)) // live until the end
			var stop atomic.Bool
			var wg sync.WaitGroup
			for i := 0; i < max(workers/2, 1); i++ {
				// One goroutine is both workers (each bank has one user at a
				// time, as on the workers): a task spawned on the first ends
				// at once on the last.
				spawner, completer := ws[i], ws[workers-1-i]
				wg.Add(1)
				go func() {
					defer wg.Done()
					for !stop.Load() {
						if e.reserveLive(spawner) == nil {
							e.releaseLive(completer)
						}
					}
				}()
			}
			zero, reads := 0, 0
			for deadline := time.Now().Add(200 * time.Millisecond); time.Now().Before(deadline); reads += 1000 {
				for range 1000 {
					if e.LiveTasks() == 0 {
						zero++
					}
				}
			}
			stop.Store(true)
			wg.Wait()
			require.Zero(t, zero, "%d workers: LiveTasks read 0 %d times in %d with a task live", workers, zero, reads)
			require.EqualValues(t, 1, e.LiveTasks(), "%d workers: after the churn", workers)
		})
	}
}

// TestSpawnsNotRefusedByAFailedReservation: workers spawning and
// completing against a nearly empty memory budget, while another task
// keeps asking the same budget for more than it has left (a refused
// allocation, a refused join), never see a spawn refused: a reservation
// that does not fit must not make one that fits fail.
func TestSpawnsNotRefusedByAFailedReservation(t *testing.T) {
	const workers, rounds = 4, 5000
	e, ws := bankEngine(workers, 1<<40)
	e.mem = vmloop.NewBudget(1 << 30)
	ws = append(ws, nil) // the host
	stop := make(chan struct{})
	var hog sync.WaitGroup
	hog.Add(1)
	go func() {
		defer hog.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if e.mem.Take(1 << 31) {
				panic("a reservation past the limit was granted")
			}
		}
	}()
	var refused atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			churn(e, w, rounds, func(err error) {
				refused.Add(1)
				first.CompareAndSwap(nil, err.Error())
			})
		}()
	}
	wg.Wait()
	close(stop)
	hog.Wait()
	require.Zero(t, refused.Load(), "spawns refused with about 1 GiB free: %v", first.Load())
	require.Zero(t, e.LiveTasks())
	require.Zero(t, e.mem.Used())
}

// TestBankBiasRevoked: owners taking and giving credits on their banks'
// plain path while another goroutine keeps revoking the bias (LiveTasks'
// reclaim, closing the banks) lose and double no credit: once every task
// has ended, the engine's count and its memory budget are back at zero
// (the failure it guards against: an owner's credit change that a revoker
// overwrote, or one it missed).
func TestBankBiasRevoked(t *testing.T) {
	const workers, rounds = 3, 100000
	for range 4 {
		e, ws := bankEngine(workers, 1<<40)
		e.mem = vmloop.NewBudget(1 << 40)
		var wg sync.WaitGroup
		for _, w := range ws {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// One task at a time: the bank stays open and between empty
				// and full, so nearly every take and put is the owner's
				// plain one.
				for i := range rounds {
					if err := e.reserveLive(w); err != nil {
						t.Errorf("spawn %d refused: %v", i, err)
						return
					}
					e.releaseLive(w)
				}
			}()
		}
		var stop atomic.Bool
		revokes := 0
		var rv sync.WaitGroup
		rv.Add(1)
		go func() {
			defer rv.Done()
			for ; !stop.Load(); revokes++ {
				e.LiveTasks()
				if revokes%64 == 63 {
					e.liveMu.Lock()
					e.closeBanksLocked()
					e.liveMu.Unlock()
				}
			}
		}()
		wg.Wait()
		stop.Store(true)
		rv.Wait()
		require.Zero(t, e.LiveTasks(), "live tasks after every task ended (%d revocations)", revokes)
		require.Zero(t, e.mem.Used(), "budget bytes held after every task ended")
	}
}

// churn spawns and ends tasks on w against e for rounds rounds, two
// spawns to each end, and ends the ones left at the end; a refused spawn
// goes to refused.
func churn(e *Engine, w *worker, rounds int, refused func(error)) {
	held := 0
	for i := range rounds {
		if i%3 != 2 {
			if err := e.reserveLive(w); err != nil {
				refused(err)
				continue
			}
			held++
		} else if held > 0 {
			e.releaseLive(w)
			held--
		}
	}
	for ; held > 0; held-- {
		e.releaseLive(w)
	}
}
