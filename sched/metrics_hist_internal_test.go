package sched

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHistBuckets: each duration lands in the bucket whose bounds hold
// it, the buckets tile [0, +Inf) without gaps, and the sub-buckets split
// each octave in quarters.
func TestHistBuckets(t *testing.T) {
	for _, c := range []struct {
		d    int64
		want int
	}{
		{0, 0}, {63, 0}, {64, 1}, {79, 1}, {80, 2}, {96, 3}, {112, 4}, {127, 4},
		{128, 5}, {1 << 20, 1 + (20-histMinExp)*histSub}, {1<<36 - 1, histBuckets - 2},
		{1 << 36, histBuckets - 1}, {1 << 62, histBuckets - 1},
	} {
		require.Equal(t, c.want, histIndex(c.d), "bucket of %d ns", c.d)
	}
	for i := 1; i < histBuckets; i++ {
		require.Greater(t, histLower(i), histLower(i-1), "bucket %d", i)
		require.Equal(t, i, histIndex(histLower(i)), "lower bound of bucket %d", i)
		require.Equal(t, i-1, histIndex(histLower(i)-1), "just below bucket %d", i)
	}
}

// TestHistMerge: a snapshot sums the workers' shards, counts and sums.
func TestHistMerge(t *testing.T) {
	var a, b hist
	for _, d := range []int64{10, 100, 1000, 1000, -5} {
		a.add(d)
	}
	b.add(1 << 40)
	var x Histogram
	x.merge(&a)
	x.merge(&b)
	require.Equal(t, uint64(6), x.Count)
	require.Equal(t, int64(10+100+1000+1000+1<<40), x.SumNs)
	require.Equal(t, uint64(2), x.Counts[0]) // 10 and -5 (as 0)
	require.Equal(t, uint64(2), x.Counts[histIndex(1000)])
	require.Equal(t, uint64(1), x.Counts[histBuckets-1])
	require.Len(t, x.BoundsNs, len(x.Counts))
	require.Equal(t, histLower(histIndex(1000)+1), x.Quantile(0.6))
	require.Equal(t, int64(1)<<histMaxExp, x.Quantile(1))
	require.Zero(t, Histogram{}.Quantile(0.5))
}

// TestStampRoundTrip: a stamp stored in a task's flags measures the time
// to dispatch to within one stamp unit, across the stamp's wrap, and
// dispatch clears it without touching the other flags.
func TestStampRoundTrip(t *testing.T) {
	for _, c := range []struct{ at, now int64 }{
		{1000, 1000 + 5_000}, {1 << 40, 1<<40 + 3_000_000}, {(1<<33 - 1) << 0, 1<<33 + 256},
	} {
		f := flagCancel | flagStamped | stampTime(c.at)<<stampTimeShift
		d := int64((stampTime(c.now)-f>>stampTimeShift)&stampTimeMask) << stampShift
		require.InDelta(t, c.now-c.at, d, 1<<stampShift, "at %d now %d", c.at, c.now)
		require.Equal(t, flagCancel, f&^uint32(stampBits))
	}
	require.Zero(t, uint32(flagCancel|flagPinned|flagWatched|flagStats)&uint32(stampBits))
}

// TestLatencyEvery: the sampling option's defaults and bounds.
func TestLatencyEvery(t *testing.T) {
	require.Equal(t, int32(DefaultLatencySample), latencyEvery(0))
	require.Equal(t, int32(1), latencyEvery(1))
	require.Equal(t, int32(0), latencyEvery(-1))
	require.Equal(t, int32(1000), latencyEvery(1000))
}
