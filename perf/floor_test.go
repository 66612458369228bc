package perf

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFloorRowsInEveryReport: the floors are rows of the text table, the
// JSON and the HTML report, and a latency row shows its ratio to its
// floor beside its absolute figure.
func TestFloorRowsInEveryReport(t *testing.T) {
	st := StealStats{Gaps: 2, LongestNs: 3e6, TotalNs: 4e6, StealMs: 10, Stalled: 3}
	fs := []Floor{
		{Name: FloorFutex, Mechanism: "futex", N: 100, P50: 40e3, P99: 200e3, P999: 7e6, Stalled: 3, Steal: &st},
		{Name: FloorNop, Absent: "no io_uring"},
	}
	row := Result{Name: "wake_latency", Metric: "p99 latency", Unit: "ns", Jade: 250e3, Baseline: 20e3, Reps: 1}
	onFloor(&row, &fs[0])
	require.Equal(t, FloorFutex, row.Floor)
	require.InDelta(t, 1.25, row.FloorRatio, 1e-9)
	rep := &Report{Floors: fs, Scenarios: append(floorRows(fs), row)}
	var tbl, js, html strings.Builder
	WriteTable(&tbl, rep)
	require.NoError(t, WriteJSON(&js, rep))
	require.NoError(t, WriteHTML(&html, rep))
	for what, out := range map[string]string{"table": tbl.String(), "html": html.String()} {
		require.Contains(t, out, "floor_futex", what)
		require.Contains(t, out, "vs floor", what)
		require.Contains(t, out, "1.25x futex", what)
		require.Contains(t, out, "3/100 samples in stalls", what)
	}
	for _, k := range []string{`"floors"`, `"floorRatio": 1.25`, `"stalledSamples": 3`, `"p999Ns": 7000000`} {
		require.Contains(t, js.String(), k)
	}
}

// TestStealDetectorCountsStalledSamples: a sample overlapping a gap of
// the spinner counts as stalled, others do not; the spinner runs on a P
// of its own and gives it back.
func TestStealDetectorCountsStalledSamples(t *testing.T) {
	d := &stealDetector{base: time.Unix(0, 0), gaps: [][2]int64{{100, 300}, {1000, 1100}}}
	at := func(ns int64) time.Time { return time.Unix(0, ns) }
	n := d.stalled([]time.Time{at(0), at(250), at(400), at(950), at(1200)},
		[]time.Duration{50, 10, 100, 100, 10})
	require.Equal(t, 2, n) // [250,260) and [950,1050)
	procs := runtime.GOMAXPROCS(0)
	live := startSteal()
	require.Equal(t, procs+1, runtime.GOMAXPROCS(0), "the spinner's own P")
	time.Sleep(10 * time.Millisecond)
	st := live.end()
	require.Equal(t, procs, runtime.GOMAXPROCS(0))
	require.Equal(t, -1, st.Stalled)
}
