package perf

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bench"
)

// TestLatencyHistogramPlot: a latency scenario's rows carry the merged
// sample histogram of its repetitions, the JSON keeps it, and the HTML
// report draws one bar per column and bucket with its counts; a summary
// without samples (wrk's) gets no histogram.
func TestLatencyHistogramPlot(t *testing.T) {
	sample := func(ds ...time.Duration) bench.Latencies { return bench.Summarize(ds) }
	js := []bench.Latencies{sample(20*time.Microsecond, 21*time.Microsecond), sample(20*time.Microsecond, 3*time.Millisecond)}
	gs := []bench.Latencies{sample(time.Millisecond, time.Millisecond), sample(time.Millisecond, 40*time.Millisecond)}
	rs := latencyResults("wake_latency", js, gs, "reported", nil)
	h := rs[0].Hist
	require.NotNil(t, h)
	require.Equal(t, uint64(3), h.Jade[bench.HistBucket(20*time.Microsecond)], "20 and 21 µs share a bucket, over both reps")
	require.Equal(t, uint64(1), h.Jade[bench.HistBucket(3*time.Millisecond)])
	require.Equal(t, uint64(3), h.Baseline[bench.HistBucket(time.Millisecond)])
	for _, r := range rs[1:] {
		require.Nil(t, r.Hist, "one histogram per scenario, on its first row")
	}

	rep := &Report{Scenarios: rs}
	var page, js2 bytes.Buffer
	require.NoError(t, WriteHTML(&page, rep))
	html := page.String()
	require.Contains(t, html, `class="chart hist"`)
	require.Contains(t, html, "jade: 1 of 4 samples (25.00%)", "the 3 ms outlier")
	require.Contains(t, html, "baseline: 3 of 4 samples (75.00%)")
	require.NoError(t, WriteJSON(&js2, rep))
	var back Report
	require.NoError(t, json.Unmarshal(js2.Bytes(), &back))
	require.Equal(t, h, back.Scenarios[0].Hist)

	wrk := latencyResults("http_c50", []bench.Latencies{{N: 10, P50: time.Millisecond}}, []bench.Latencies{{N: 10, P50: time.Millisecond}}, "reported", nil)
	require.Nil(t, wrk[0].Hist)
	page.Reset()
	require.NoError(t, WriteHTML(&page, &Report{Scenarios: wrk}))
	require.False(t, strings.Contains(page.String(), `class="chart hist"`))
}
