package perf

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunSubset runs two cheap scenarios, adds an absent one, and checks
// the table and the JSON shape.
func TestRunSubset(t *testing.T) {
	if testing.Short() {
		t.Skip("measures")
	}
	rep, err := Run(Options{Quick: true, Reps: 1, Scenarios: []string{"timer_insert_cancel", "yield"}})
	require.NoError(t, err)
	// Every scenario can run somewhere; an absent one looks like this.
	rep.Scenarios = append(rep.Scenarios, Result{Name: "resp_ping", Absent: "redis-benchmark not installed"})
	require.Len(t, rep.Scenarios, 3, "got %d results: %+v", len(rep.Scenarios), rep.Scenarios)
	for _, r := range rep.Scenarios {
		switch r.Name {
		case "resp_ping":
			if r.Absent == "" {
				t.Errorf("resp_ping should be absent: %+v", r)
			}
		default:
			if r.Jade <= 0 || r.Baseline <= 0 || r.Ratio <= 0 || r.Pass == nil {
				t.Errorf("%s: not measured: %+v", r.Name, r)
			}
		}
	}
	var tbl, js bytes.Buffer
	WriteTable(&tbl, rep)
	if !strings.Contains(tbl.String(), "timer_insert_cancel") || !strings.Contains(tbl.String(), "absent") {
		t.Errorf("table:\n%s", tbl.String())
	}
	require.NoError(t, WriteJSON(&js, rep))
	var page bytes.Buffer
	if err := WriteHTML(&page, rep); err != nil || !strings.Contains(page.String(), "<svg") || strings.Contains(page.String(), "http://") && !strings.Contains(page.String(), "xmlns=\"http://www.w3.org/2000/svg\"") {
		t.Errorf("html: %v", err)
	}
	var back map[string]any
	require.NoError(t, json.Unmarshal(js.Bytes(), &back))
	m := back["machine"].(map[string]any)
	for _, k := range []string{"cpu", "cores", "go", "kernel", "backend", "workers"} {
		if _, ok := m[k]; !ok {
			t.Errorf("machine.%s missing", k)
		}
	}
}

func TestUnknownScenario(t *testing.T) {
	if _, err := Run(Options{Scenarios: []string{"nope"}}); err == nil || !strings.Contains(err.Error(), "unknown scenario") {
		t.Fatalf("err = %v", err)
	}
}

// TestLatencyRowsAreGated: #19's latency targets are gates, not reports:
// wake_latency's p99 and p99.9 are held to their absolute bounds and
// sleep_lateness's to time.Sleep's, each with a Pass that follows the
// figures.
func TestLatencyRowsAreGated(t *testing.T) {
	if testing.Short() {
		t.Skip("measures")
	}
	rep, err := Run(Options{Quick: true, Reps: 1, Scenarios: []string{"wake_latency", "sleep_lateness"}})
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, r := range rep.Scenarios {
		if r.Metric != "p99 latency" && r.Metric != "p99.9 latency" {
			continue
		}
		require.NotNil(t, r.Pass, "%s %s is not gated", r.Name, r.Metric)
		var want bool
		switch {
		case r.Name == "wake_latency" && r.Metric == "p99 latency":
			want = r.Jade <= float64(wakeP99Target)
		case r.Name == "wake_latency":
			want = r.Jade <= float64(wakeP999Target)
		case r.Metric == "p99 latency":
			want = r.Jade <= r.Baseline
		default:
			want = r.Jade <= 2*r.Baseline
		}
		require.Equal(t, want, *r.Pass, "%s %s: %v against %v", r.Name, r.Metric, r.Jade, r.Baseline)
		seen[r.Name+" "+r.Metric] = true
	}
	require.Len(t, seen, 4)
}
