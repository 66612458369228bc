package sched

import (
	"sync/atomic"

	"github.com/jadevm/jade/internal/jtrace"
)

// Worker time accounting: where each worker's wall time goes, so that
// utilisation = busy / wall, as BEAM's scheduler_wall_time. Busy is the
// wall time less the time parked, searching (spinning over the other
// workers' rings for work to steal) and handed to Go's scheduler
// (yieldGo): running slices, and what the worker does between them
// (picks, timers, polls). Syscalls (polls of the completion backend that
// do not block) and host calls (host intrinsics run on the worker) are
// parts of busy, reported beside it. A blocking poll in the park is
// parked time.
//
// Each clock read is at a transition that costs far more than it: a
// park, a search, a hand-over, a system call, a host call. A dispatch
// reads no clock for these.

// workerTimes are a worker's accumulated times in nanoseconds: written by
// the owner only (load and store, no locked add), read by Metrics at any
// time. parkSince and searchSince are the start of the park or search in
// progress, 0 when none (Metrics adds what has elapsed since).
type workerTimes struct {
	start                              atomic.Int64
	parked, search, goYield, sys, host atomic.Int64
	parkSince, searchSince             atomic.Int64
}

// addTo adds d to an owner-only accumulator.
func addTo(a *atomic.Int64, d int64) { a.Store(a.Load() + d) }

// parkBegin and parkEnd bracket a blocking park.
func (w *worker) parkBegin() {
	now := nanotime()
	w.times.parkSince.Store(now)
	if w.tr != nil {
		w.traceAt(jtrace.KindPark, now, 0)
	}
}

func (w *worker) parkEnd() {
	now := nanotime()
	addTo(&w.times.parked, now-w.times.parkSince.Load())
	w.times.parkSince.Store(0)
	if w.tr != nil {
		w.traceAt(jtrace.KindUnpark, now, 0)
	}
}

// searchBegin marks the start of a search (beginSearch, or a notified
// worker taking over the searching count).
func (w *worker) searchBegin() { w.times.searchSince.Store(nanotime()) }

// searchEnd ends the search in progress, if any.
func (w *worker) searchEnd() {
	if since := w.times.searchSince.Load(); since != 0 {
		addTo(&w.times.search, nanotime()-since)
		w.times.searchSince.Store(0)
	}
}

// pollBusy is a poll of w's backend that does not block, timed as
// syscall time.
func (w *worker) pollBusy(x *workerIO) int {
	t0 := nanotime()
	n := w.pollIO(x, 0)
	addTo(&w.times.sys, nanotime()-t0)
	return n
}

// WorkerTimes are where a worker's wall time went (nanoseconds since it
// started). Busy = Wall − Parked − Searching − GoYield; Syscall and
// HostCall are parts of Busy.
type WorkerTimes struct {
	WallNs      int64 `json:"wallNs"`
	BusyNs      int64 `json:"busyNs"`
	ParkedNs    int64 `json:"parkedNs"`
	SearchingNs int64 `json:"searchingNs"` // spinning: looking for work to steal
	GoYieldNs   int64 `json:"goYieldNs"`   // handed to Go's scheduler (yieldGo)
	SyscallNs   int64 `json:"syscallNs"`   // non-blocking polls of the completion backend
	HostCallNs  int64 `json:"hostCallNs"`  // host intrinsics run on the worker
	// Utilisation is BusyNs / WallNs (0 before the worker started).
	Utilisation float64 `json:"utilisation"`
}

// times reads w's times at now.
func (w *worker) readTimes(now int64) WorkerTimes {
	x := &w.times
	start := x.start.Load()
	if start == 0 {
		return WorkerTimes{}
	}
	t := WorkerTimes{WallNs: now - start, ParkedNs: x.parked.Load(), SearchingNs: x.search.Load(),
		GoYieldNs: x.goYield.Load(), SyscallNs: x.sys.Load(), HostCallNs: x.host.Load()}
	if since := x.parkSince.Load(); since != 0 {
		t.ParkedNs += max(now-since, 0)
	}
	if since := x.searchSince.Load(); since != 0 {
		t.SearchingNs += max(now-since, 0)
	}
	t.BusyNs = max(t.WallNs-t.ParkedNs-t.SearchingNs-t.GoYieldNs, 0)
	if t.WallNs > 0 {
		t.Utilisation = float64(t.BusyNs) / float64(t.WallNs)
	}
	return t
}
