package sched

import (
	"fmt"

	"github.com/jadevm/jade/internal/asymfence"
)

// An engine's liveTasks limit is kept with per-worker credit banks: a
// worker takes liveBatch places from the engine's count (Engine.live) at a
// time and spends them on its spawns, and completions on a worker put
// their places in its bank, so the count is written once per liveBatch
// tasks instead of twice per task from every worker.
//
// Near the limit, and after UpdateEngine, the banks are closed: their
// credits go back to the count and every spawn and completion takes or
// gives its one place under Engine.liveMu, so a spawn is refused only when
// the engine has that many live tasks. Everything that moves credits
// between the count and a bank holds liveMu.
//
// A bank is owner-biased (bias.go): its worker takes or puts one credit
// with plain loads and stores, no locked instruction (two fewer a spawn
// and its end, BenchmarkChainedSpawn, BenchmarkSpawnMany). Anyone else
// who changes a bank (a reclaim, closing the banks) holds liveMu and
// revokes the bias first (Engine.revokeLocked); an owner that finds its
// bank revoked takes liveMu instead. Revocations are rare:
// Engine.LiveTasks, and closing the banks near the limit or at
// UpdateEngine.

// liveBatch is how many live-task credits a refill moves from the engine's
// count into a bank; a bank holds at most 2·liveBatch.
const liveBatch = 32

// closedBank is the value of a closed bank (liveBank.n).
const closedBank = -1

// liveBank holds the live-task credits one worker took from its engine's
// count and has not used, or got back from completions and not returned.
type liveBank struct {
	// n is the bank's credits (>= 0), or closedBank. Its owner changes it
	// in its section (take, put: the bias not revoked) or while it holds
	// liveMu (refill, batch return); anyone else only while it holds
	// liveMu and has revoked the bias (revokeLocked).
	n int64
	bias
	_ [cacheLinePad - 16]byte
}

// take spends one credit of an open bank; false when it has none or the
// bias is revoked. Called by the bank's owner only.
func (b *liveBank) take() bool {
	ok := b.enter() && b.n > 0
	if ok {
		b.n--
	}
	b.leave()
	return ok
}

// put banks one credit; false when the bank is closed or full, or the
// bias is revoked. Called by the bank's owner only.
func (b *liveBank) put() bool {
	ok := b.enter() && b.n >= 0 && b.n < 2*liveBatch
	if ok {
		b.n++
	}
	b.leave()
	return ok
}

// revokeLocked revokes the bias of every bank of e and waits until no
// owner is in its section: n is then the caller's until unrevokeLocked
// (liveMu held).
func (e *Engine) revokeLocked() {
	for i := range e.banks {
		e.banks[i].revoke()
	}
	asymfence.Heavy()
	for i := range e.banks {
		e.banks[i].waitOut()
	}
}

// unrevokeLocked gives every bank's owner its section back (liveMu held).
func (e *Engine) unrevokeLocked() {
	for i := range e.banks {
		e.banks[i].unrevoke()
	}
}

// bank returns w's bank, or nil for the host (w nil).
func (e *Engine) bank(w *worker) *liveBank {
	if w == nil || w.id >= len(e.banks) {
		return nil
	}
	return &e.banks[w.id]
}

// bankingLocked reports whether a bank may be refilled under the limit
// lim: only while a batch for every worker, and one more, fits, so that
// the banks hold a small part of the limit and closing them (a reclaim
// that touches every worker's line) is rare.
func (e *Engine) bankingLocked(lim int64) bool {
	return e.live+liveBatch*int64(len(e.banks)+1) <= lim
}

// reserveLive takes a live-task place for a spawn made on w (nil: the
// host) under the engine's liveTasks limit: a credit from w's open bank,
// else, under liveMu, a refill of w's bank while banking, else exactly
// one place of the count after closing every bank (their credits go back
// to the count first). So a spawn is refused only when the engine has
// that many live tasks, or when completions racing it have not given
// their places back yet, or when the memory budget cannot hold one more
// task (a batch refused by the budget is not a refusal: Budget.Take never
// counts a reservation it refuses, so a concurrent one that fits goes
// through). The configuration is read under liveMu:
// UpdateEngine closes the banks under it after storing a new one, so a
// lowered limit holds from the next spawn on.
func (e *Engine) reserveLive(w *worker) error {
	b := e.bank(w)
	if b != nil && b.take() {
		return nil
	}
	e.liveMu.Lock()
	defer e.liveMu.Unlock()
	lim := e.cfg.Load().Limits.LiveTasks
	if e.bankingLocked(lim) {
		if b != nil && e.mem.Take(liveBatch*taskBytes) {
			e.live += liveBatch
			// The owner, under liveMu: no revoker is at its bank.
			if b.n == closedBank { // reopened
				b.n = liveBatch - 1
			} else {
				b.n += liveBatch - 1 // one is this spawn's
			}
			e.banksClosed = false
			return nil
		}
		if b != nil {
			e.closeBanksLocked() // the budget is near its end: one place at a time
		}
	} else {
		e.closeBanksLocked()
	}
	if e.live >= lim {
		return fmt.Errorf("sched: spawn: engine %q has %d live %s (limit %d): %w", e.name, e.live, plural(int(e.live), "task"), lim, ErrLimit)
	}
	if !e.mem.Take(taskBytes) {
		return fmt.Errorf("sched: spawn: engine %q: its tasks hold %d of its %d bytes of memory (memoryBytes limit; %d live tasks): %w", e.name, e.mem.Used(), e.mem.Limit(), e.live, ErrLimit)
	}
	e.live++
	return nil
}

// dropLiveLocked takes n places off the count with their share of the
// memory budget (liveMu held).
func (e *Engine) dropLiveLocked(n int64) {
	e.live -= n
	e.mem.Give(n * taskBytes)
}

// releaseLive gives back the place of a task that completed on w (nil:
// off the workers): to w's open bank, or, when the bank is full, to the
// count with the bank's credits beyond liveBatch; when the banks are
// closed, straight to the count.
func (e *Engine) releaseLive(w *worker) {
	b := e.bank(w)
	if b != nil && b.put() {
		return
	}
	e.liveMu.Lock()
	defer e.liveMu.Unlock()
	// The owner, under liveMu: no revoker is at its bank.
	if b != nil && b.n >= 0 {
		// Full (or revoked when put looked): keep at most a batch, so
		// that the next spawns here need no refill.
		keep := min(b.n+1, liveBatch)
		e.dropLiveLocked(b.n + 1 - keep)
		b.n = keep
		return
	}
	e.dropLiveLocked(1)
}

// closeBanksLocked takes every bank's credits back into the count and
// closes the banks, so that spawns and completions take and give their
// places at the count (liveMu held).
func (e *Engine) closeBanksLocked() {
	if e.banksClosed {
		return
	}
	e.revokeLocked()
	for i := range e.banks {
		b := &e.banks[i]
		if b.n > 0 {
			e.dropLiveLocked(b.n)
		}
		b.n = closedBank
	}
	e.unrevokeLocked()
	e.banksClosed = true
}

// reclaimLocked takes the credits of every open bank back into the count,
// leaving the banks open and empty (liveMu held).
func (e *Engine) reclaimLocked() {
	if e.banksClosed {
		return // nothing banked
	}
	e.revokeLocked()
	for i := range e.banks {
		if b := &e.banks[i]; b.n > 0 {
			e.dropLiveLocked(b.n)
			b.n = 0
		}
	}
	e.unrevokeLocked()
}

// LiveTasks returns the number of live tasks of the engine. It takes the
// banks' unused credits back into the engine's count under liveMu (the
// workers refill at their next spawn), so the count is then the tasks
// holding a place: exact when no spawn or completion of the engine runs
// concurrently, and otherwise never below the tasks live when it returns,
// though it may count a task that is just ending. Drain and Shutdown use
// the registry's count instead (Scheduler.LiveTasks). While credits are
// banked it revokes the banks' bias: a barrier that interrupts every
// running worker for about a microsecond, fine for a metrics read, not
// for a loop that polls it.
func (e *Engine) LiveTasks() int64 {
	e.liveMu.Lock()
	defer e.liveMu.Unlock()
	e.reclaimLocked()
	return e.live
}
