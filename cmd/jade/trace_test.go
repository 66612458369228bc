package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTraceFlag: jade run --trace writes a Chrome trace of the run with
// a slice of main on a worker track.
func TestTraceFlag(t *testing.T) {
	out := filepath.Join(t.TempDir(), "trace.json")
	var stdout, stderr bytes.Buffer
	code := run([]string{"run", "--workers", "2", "--trace", out, "../../examples/fanout.jasm"}, &stdout, &stderr)
	require.Equal(t, exitSuccess, code, stderr.String())
	require.Equal(t, "49995000\n", stdout.String())
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var tr struct {
		TraceEvents []struct {
			Name string         `json:"name"`
			Ph   string         `json:"ph"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(b, &tr))
	children := 0
	for _, e := range tr.TraceEvents {
		if e.Ph == "X" && e.Name == "child" && e.Args["end"] == "complete" {
			children++
		}
	}
	require.Equal(t, 10_000, children)
}
