package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestHistBuckets: each bucket holds the durations from its lower bound
// up to the next one, the ends hold everything beyond, and Summarize's
// histogram counts every sample once.
func TestHistBuckets(t *testing.T) {
	for i := 1; i < HistBuckets; i++ {
		lo := HistLower(i)
		require.Greater(t, lo, HistLower(i-1))
		require.Equal(t, i, HistBucket(lo), "bound %v", lo)
		require.Equal(t, i-1, HistBucket(lo-1), "just below %v", lo)
	}
	require.Equal(t, 0, HistBucket(0))
	require.Equal(t, 0, HistBucket(-time.Second))
	require.Equal(t, HistBuckets-1, HistBucket(time.Hour))
	require.Equal(t, 10*time.Second, HistLower(HistBuckets))

	d := []time.Duration{50, 150 * time.Microsecond, 150 * time.Microsecond, 2 * time.Millisecond, time.Minute}
	l := Summarize(d)
	var n uint32
	for _, c := range l.Hist {
		n += c
	}
	require.Equal(t, uint32(len(d)), n)
	require.Equal(t, uint32(2), l.Hist[HistBucket(150*time.Microsecond)])
}
