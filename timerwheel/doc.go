// Package timerwheel is the engine-local timer machinery of the Jade
// scheduler: a hierarchical timer wheel after Varghese & Lauck (SOSP 1987)
// in the shape Tokio uses (levels of 64 slots with occupancy bitmaps), and
// a clock-free policy engine for periodic jobs (spec §4.3–§4.5, S-4, S-15).
//
// # One shard, one owner
//
// A Wheel has no goroutine, no lock and never reads a clock. Time is an
// int64 of nanoseconds on a monotonic clock that the caller passes in:
// Insert(deadline, payload) files a timer, NextDeadline() says when the
// earliest one is due, Advance(now, dst) appends the due ones to dst. The
// payload is an opaque uint64 (the scheduler's wake token).
//
// An engine's tasks run on every worker, so the scheduler keeps one Wheel
// per (engine, worker) — a shard — and each shard is mutated only by its
// worker. A task's timer goes into the shard of the worker the task runs on
// when it arms the timer; the task's wait record keeps (shard, Handle). A
// worker computes its park timeout as the minimum NextDeadline over its
// shards, and at every slice boundary does the cheap check now ≥ that
// minimum. Because only the owner inserts, a parked worker never needs to
// be woken for an earlier timer of its own shards; a host goroutine that
// wants a timer asks a worker to arm it (through the inject queue). The
// only operation from elsewhere is CancelRemote (below).
//
// One holder at a time. "Mutated only by its worker" is, precisely: a
// Wheel is used by one goroutine at a time, with a happens-before edge
// between two users, and the Wheel itself has no lock. The scheduler
// gives each worker's shards a hold word (sched/stall.go): the owner
// takes it with a compare-and-swap around each insert, cancel and advance
// and gives it back at once, never across a task's slice or a park;
// another worker takes it only from free, and only when the owner's
// published earliest deadline is overdue by about two slices — the owner
// is stalled (its thread blocked in a host call, its vCPU taken) — and
// then advances the stalled shards itself and wakes the due timers' tasks
// (what Go's stealWork does under another P's timer lock). The owner's
// operations keep their costs (nothing here is in the Wheel: the
// benchmarks measure the Wheel alone), the word's line stays in the
// owner's cache, and the owner waits for it only while a thief advances
// its shards, which happens only after the owner was late itself.
// CancelRemote needs no hold.
//
// # Levels and slot math
//
// With S = SlotsPerLevel = 2^b slots per level, L levels and a Tick, a
// clock value t maps to the tick ⌊(t − origin)/Tick⌋, where origin is the
// time given to New. Digit l of a tick is (tick >> (l·b)) & (S−1). The
// wheel keeps a current tick E (the tick of the latest Advance, or behind
// it when Advance found nothing to do). An entry is filed at a placement
// tick p:
//
//	p     = clamp(tick(deadline), E, E's top-level slot start + S^L − 1)
//	level = index of the highest digit in which p and E differ (0 if p = E)
//	slot  = digit `level` of p
//
// So an entry at level l shares E's digits above l and has a larger digit
// l: every level-l entry precedes every level-(l+1) entry, and level l
// spans S^(l+1) ticks. With DefaultConfig (6 × 64 × 1 ms, the range of
// 2^36 ms ≈ 2.2 years):
//
//	level  slot width  level span
//	0      1 ms        64 ms
//	1      64 ms       ≈ 4.1 s
//	2      ≈ 4.1 s     ≈ 4.4 min
//	3      ≈ 4.4 min   ≈ 4.7 h
//	4      ≈ 4.7 h     ≈ 12.4 days
//	5      ≈ 12.4 days ≈ 2.2 years
//
// Deadlines at or before E are filed in E's own level-0 slot, which Advance
// always inspects: deadlines in the past fire on the next Advance. Deadlines
// beyond the range are parked in the top level at the last slot before E's
// top-level slot comes round again, flagged as parked, and re-filed when
// that slot is reached (once per 2.2 years of wheel time by default).
//
// # Exact deadlines
//
// Entries keep their exact deadline; the tick only decides where they are
// filed. Advance(now) fires exactly the entries with deadline ≤ now: the
// level-0 slot of now's own tick is filtered by deadline, every earlier
// slot is wholly due. NextDeadline returns the earliest entry's own
// deadline, never a slot boundary, so a worker parks with a timespec
// timeout (io_uring EXT_ARG, epoll_pwait2, futex) until exactly then and
// precision is the clock's, not the tick's. A timer 10 s ahead costs that
// worker one wake-up, and at most one move per level it passes through
// (Stats.Cascades) however often Advance is called.
//
// # Occupancy bitmaps and NextDeadline
//
// Each level has a uint64 bitmap of non-empty slots (hence S ≤ 64). The
// earliest occupied slot is found without scanning: take the lowest level
// with a non-zero bitmap, rotate it right by E's digit at that level and
// count trailing zeros — O(L) word operations. The earliest deadline is the
// minimum over that one slot's list, so a miss costs O(L) plus the length
// of that list (Stats.SlotScans, Stats.ScanSteps). A level-0 list holds one
// tick's entries; a level-l list holds S^l ticks' worth, so the walk is
// short near the present and can be long for a crowded far slot. One
// exception: when the earliest slot is in the top level and parked entries
// exist, parked entries of different slots are not ordered by slot, so all
// top-level lists are walked. The result is cached: inserts and resets
// lower it in O(1); only removing the minimum itself (fire or cancel)
// forces the next NextDeadline to walk again.
//
// # Advance and cascading
//
// Advance(now) first compares now with the cached NextDeadline: when
// nothing is due it costs O(1) and touches no slot. Otherwise it repeats:
// find the earliest occupied slot; if it starts after now's tick, stop;
// move E to the slot's start; a level-0 slot's due entries are collected, a
// higher slot is cascaded: each entry is re-filed relative to the new E and
// lands in a lower level. Empty slots are never visited, so the cost is
// O(L) per occupied slot passed plus one move per entry per level. A jump
// of at least the whole range sweeps all entries once instead (O(pending)),
// so parked entries are not re-parked once per range on the way. The due
// entries are sorted by (deadline, insertion sequence) and delivered in
// that order: within one Advance timers fire in deadline order, ties in
// insertion order, a Reset counting as a new insertion. Timers inserted
// after an Advance returns fire on a later Advance, even if already due.
//
// # Slab, handles and memory
//
// Entries are 48-byte records (deadline, payload, sequence, int32 list
// links, generation, remote-cancel link, slot id) in pages of 512 entries
// (24 KiB, an exact size class) with an intrusive free list: no per-timer
// heap allocation once the slab has reached the shard's peak, and no Go
// pointers per timer for the GC to scan. Pages never move and the slab
// never shrinks (its high-water mark is Stats.SlabEntries). A Handle is the
// value (index, generation): the generation is odd while the entry is
// pending and bumped to even when it fires or is cancelled, and to odd
// again on reuse, so a stale Handle's Cancel, CancelRemote or Reset is a
// no-op.
//
// # Cancelling from another goroutine
//
// Cancel and Reset are owner-only. CancelRemote may be called from any
// goroutine at any time. The pending→dead transition of an entry is a
// compare-and-swap of its generation from the handle's odd value to the
// next even one; the owner's fire (in Advance), Cancel and CancelRemote all
// use that same CAS, so exactly one of them wins and a fire racing a cancel
// is either delivered (the cancel returns false) or never delivered (the
// cancel returns true). The remote winner cannot unlink the entry (the
// lists are the owner's), so it pushes the entry on a lock-free stack
// threaded through the entries (push-only; the owner swaps the whole stack
// out, so there is no ABA). The owner drains that stack at the start of
// Advance, NextDeadline, Len and Stats, unlinking and freeing the entries.
// The canceller resolves the index through a page directory that the owner
// republishes with an atomic pointer whenever it adds a page; old
// directories stay valid because pages never move. A remote cancel that
// lands after the owner computed its park deadline can at worst make the
// owner wake early once for nothing. This is the scheme the Tokio
// alternative timer uses (a per-worker wheel with a cross-thread cancel
// queue, tokio RFC #7384), without the allocation per message.
//
// # Costs
//
//	Insert        O(1): a division, a bit scan, a list push; no allocation in steady state
//	Cancel        O(1): one CAS, a list unlink
//	Reset         O(1)
//	CancelRemote  O(1) lock-free: one CAS, a push (retried only under contention)
//	NextDeadline  O(1) cached; O(L) + one slot's list on a miss (see above)
//	Advance       O(1) when nothing is due; otherwise see above, plus a sort of the due entries
//	memory        48 B per pending timer + a 24 KiB page per 512 entries at the high-water mark
//
// The benchmarks in bench_test.go compare this with time.AfterFunc side by
// side (go test -run '^$' -bench Timer ./timerwheel).
//
// # Periodic jobs
//
// Periodic is a pure policy engine for one job: NewPeriodic(cfg, first),
// arm Next() in the wheel; when it fires call Start(now), run the handler,
// call Finish(end) and arm the returned time. Start refuses a second run
// while one is in progress (ErrRunning), so at most one handler instance
// of a job runs at a time. The overrun policy (the job's, else the
// engine's, else Drift — OverrunPolicy.Resolve) decides what happens when
// the handler is slower than its period:
//
//	Drift  next run = completion + Period; nothing piles up, the phase drifts
//	Skip   next run = first instant first + k·Period at or after completion;
//	       the instants in between are counted as skipped; the phase is kept
//	Queue  missed instants run back to back, starting at completion; at most
//	       MaxBacklog wait, older ones are dropped and counted; the phase is kept
//
// Metrics (spec §4.5): TargetRate = 1/Period; ActualRate = runs per second
// over the last 16 run starts; handler duration last, mean and max;
// OverrunCount = runs whose handler took longer than Period (or that met a
// refused Start); plus skipped, dropped and backlog counts and the last
// start's lateness.
//
// # Compatibility
//
// This is an implementation package of the Jade runtime, with no
// compatibility promise between versions: its API changes whenever the
// runtime needs it to. A Go host imports the root package,
// github.com/jadevm/jade, whose API and program model are what the
// module's version promises.
package timerwheel
