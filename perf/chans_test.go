package perf

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestChanScenarios runs the channel scenarios once at the quick sizes:
// every row is measured on both sides and gated, at each worker count;
// no figure is judged (speed is the report's business, not a test's).
func TestChanScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("measures")
	}
	rep, err := Run(Options{Quick: true, Reps: 1, Scenarios: []string{"chan_ping_pong", "chan_stream", "chan_fan_in", "select4", "chan_buffered_bytes"}})
	require.NoError(t, err)
	var rows []string
	for _, r := range rep.Scenarios {
		rows = append(rows, r.Name+" / "+r.Metric)
		require.Empty(t, r.Absent, r.Name)
		require.Positive(t, r.Jade, "%s %s", r.Name, r.Metric)
		require.Positive(t, r.Baseline, "%s %s", r.Name, r.Metric)
		require.NotNil(t, r.Pass, "%s %s is gated", r.Name, r.Metric)
		require.Equal(t, r.Ratio >= 1, *r.Pass, "%s %s", r.Name, r.Metric)
	}
	require.Equal(t, []string{
		"chan_ping_pong / round trip, 1 worker", "chan_ping_pong / round trip, 2 workers",
		"chan_stream / per msg, 1 worker", "chan_stream / per msg, 2 workers",
		"chan_fan_in / per msg, 1 worker", "chan_fan_in / per msg, 2 workers",
		"select4 / per select (4 cases, 1 ready)",
		"chan_buffered_bytes / bytes per buffered i64",
	}, rows)
}
