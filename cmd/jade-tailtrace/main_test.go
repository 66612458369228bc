package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRecordAndAnalyse records a short wake_latency trace and reads it
// back: every sample is found with its latency, the worker's park and
// return are in each sample's window, and the report classifies every
// sample above the quantile.
func TestRecordAndAnalyse(t *testing.T) {
	a := recordAndRead(t, "wake", 200)
	for _, s := range a.samples {
		require.Positive(t, s.d)
	}
	woke := 0
	for _, s := range a.samples {
		for _, e := range a.window(s, 0, 0) {
			if e.g != a.host && e.to.String() == "Running" {
				woke++
				break
			}
		}
	}
	require.Greater(t, woke, 150, "samples whose window shows the worker's goroutine running again")
	var out bytes.Buffer
	a.report(&out, 0.9, 2, 50*time.Microsecond)
	require.Contains(t, out.String(), "200 samples:")
	line := strings.Split(out.String(), "\n")[1]
	require.Contains(t, line, "samples above p90")
}

// TestSleepShape records the sleep shape, whose samples are logged by the
// task as they end, and finds every one.
func TestSleepShape(t *testing.T) {
	recordAndRead(t, "sleep", 100)
	_, err := record("bogus", 1, filepath.Join(t.TempDir(), "b.trace"))
	require.ErrorContains(t, err, "unknown -shape")
}

// recordAndRead records n samples of shape and reads the trace back,
// checking that every sample is found.
func recordAndRead(t *testing.T, shape string, n int) *analysis {
	t.Helper()
	path := filepath.Join(t.TempDir(), shape+".trace")
	_, err := record(shape, n, path)
	require.NoError(t, err)
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	a, err := analyse(f)
	require.NoError(t, err)
	require.Len(t, a.samples, n)
	return a
}
