package sched

import (
	"math"
	"math/bits"
	"sync/atomic"
)

// Latency histograms (run-queue latency, wake-to-dispatch, timer
// lateness): log-linear buckets, one set per engine and worker, written
// only by that worker and summed when Metrics reads them.
//
// Buckets: [0, 64 ns), then every power of two from 2^6 ns to 2^36 ns
// (~68.7 s) split into histSub equal sub-buckets (a bucket's width is a
// quarter of its octave: a value is known to within 25 % of its octave's
// base, better than any HdrHistogram of one significant digit), then one
// overflow bucket [2^36 ns, +Inf). Recording is a bit length, a shift and
// two single-writer atomic adds: no allocation, no lock, and no
// cache-line shared with another worker.

const (
	histMinExp = 6  // the first octave starts at 2^6 ns
	histMaxExp = 36 // values from 2^36 ns go to the overflow bucket
	histSubLog = 2
	histSub    = 1 << histSubLog
	// histBuckets: the underflow bucket, the octaves' sub-buckets, the
	// overflow bucket.
	histBuckets = 1 + (histMaxExp-histMinExp)*histSub + 1
)

// histIndex returns the bucket of a duration of d nanoseconds.
func histIndex(d int64) int {
	if d < 1<<histMinExp {
		return 0
	}
	e := bits.Len64(uint64(d)) - 1
	if e >= histMaxExp {
		return histBuckets - 1
	}
	sub := int(uint64(d)>>(e-histSubLog)) & (histSub - 1)
	return 1 + (e-histMinExp)*histSub + sub
}

// histLower returns the lower bound, in nanoseconds, of bucket i.
func histLower(i int) int64 {
	switch {
	case i <= 0:
		return 0
	case i >= histBuckets-1:
		return 1 << histMaxExp
	}
	i--
	e := histMinExp + i/histSub
	return 1<<e + int64(i%histSub)<<(e-histSubLog)
}

// hist is one worker's histogram: counts and the sum of the recorded
// values. Single writer (the owning worker); read by Metrics at any time.
type hist struct {
	counts [histBuckets]atomic.Uint64
	sum    atomic.Int64 // nanoseconds
}

// add records a duration of d nanoseconds (negative counts as 0). Only
// the owning worker calls it, so load-and-store replaces a locked add.
func (h *hist) add(d int64) {
	d = max(d, 0)
	c := &h.counts[histIndex(d)]
	c.Store(c.Load() + 1)
	h.sum.Store(h.sum.Load() + d)
}

// engineHists is one worker's set of an engine's latency histograms.
type engineHists struct {
	runq  hist // Runnable → Running, every sampled dispatch
	wake  hist // wake (Waiting → Runnable) → Running, sampled
	timer hist // a timer's deadline → the tick that fired it, every timer
	_     [cacheLinePad]byte
}

// Histogram is a snapshot of a latency histogram, laid out as Go's
// runtime/metrics Float64Histogram but in integer nanoseconds so that it
// encodes to JSON: Counts[i] values fell in [BoundsNs[i], BoundsNs[i+1]),
// and the last bucket has no upper bound. Count is the sum of Counts; SumNs
// is the sum of the values recorded.
type Histogram struct {
	Counts   []uint64 `json:"counts"`
	BoundsNs []int64  `json:"boundsNs"` // lower bound of each bucket
	Count    uint64   `json:"count"`
	SumNs    int64    `json:"sumNs"`
}

// histBounds are the buckets' lower bounds, copied into every Histogram.
var histBounds = func() []int64 {
	b := make([]int64, histBuckets)
	for i := range b {
		b[i] = histLower(i)
	}
	return b
}()

// merge adds h into x.
func (x *Histogram) merge(h *hist) {
	if x.Counts == nil {
		x.Counts = make([]uint64, histBuckets)
		x.BoundsNs = append([]int64(nil), histBounds...) // the caller's to keep
	}
	for i := range h.counts {
		c := h.counts[i].Load()
		x.Counts[i] += c
		x.Count += c
	}
	x.SumNs += h.sum.Load()
}

// Quantile returns an estimate of quantile q (0..1) in nanoseconds: the
// upper bound of the bucket holding it (the lower bound for the overflow
// bucket); 0 for an empty histogram.
func (x Histogram) Quantile(q float64) int64 {
	if x.Count == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(x.Count)))
	rank = max(rank, 1)
	var seen uint64
	for i, c := range x.Counts {
		seen += c
		if seen >= rank {
			if i+1 < len(x.BoundsNs) {
				return x.BoundsNs[i+1]
			}
			return x.BoundsNs[i]
		}
	}
	return x.BoundsNs[len(x.BoundsNs)-1]
}
