package jtrace

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

type traceFile struct {
	TraceEvents []map[string]any `json:"traceEvents"`
	OtherData   map[string]any   `json:"otherData"`
}

// TestEncoderSlicesAndFlows: a dispatch and its end make one slice with
// the task's names, a wake makes an arrow to the woken task's dispatch
// on another track, times between exact events are spread evenly, and
// an open slice ends at Close.
func TestEncoderSlicesAndFlows(t *testing.T) {
	var strs Strings
	fn, name := strs.ID("child"), strs.ID("worker-pool")
	var buf bytes.Buffer
	enc := NewEncoder(&buf, []string{"worker 0", "worker 1"}, &strs)
	enc.Add(0, []Event{
		{Kind: KindDispatch, Task: 7, Fn: fn, PC: 0, Arg: uint64(name), Time: 1000, Flags: Exact},
		{Kind: KindWake, Task: 8, Arg: 7, Flow: 3},
		{Kind: KindSliceEnd, Task: 7, Fn: fn, PC: 4, Reason: EndComplete},
		{Kind: KindPark, Time: 4000, Flags: Exact},
	})
	enc.Add(1, []Event{
		{Kind: KindDispatch, Task: 8, Fn: fn, Flow: 3, Time: 5000, Flags: Exact},
	})
	require.NoError(t, enc.Close(9000, 2))

	var tf traceFile
	require.NoError(t, json.Unmarshal(buf.Bytes(), &tf), buf.String())
	require.Equal(t, float64(2), tf.OtherData["droppedEvents"])
	var slices, parks, s, f int
	for _, e := range tf.TraceEvents {
		args, _ := e["args"].(map[string]any)
		switch {
		case e["ph"] == "X" && e["cat"] == "task" && args["task"] == float64(7):
			slices++
			require.Equal(t, "child", e["name"])
			require.Equal(t, "worker-pool", args["taskName"])
			require.Equal(t, "complete", args["end"])
			require.Equal(t, "child@4", args["endAt"])
			require.Equal(t, 1.0, e["ts"])  // µs
			require.Equal(t, 2.0, e["dur"]) // spread: wake at 2 µs, end at 3 µs
		case e["ph"] == "X" && e["cat"] == "task" && args["task"] == float64(8):
			require.Equal(t, "running", args["note"])
			require.Equal(t, 4.0, e["dur"]) // to Close's end
		case e["name"] == "parked":
			parks++
			require.Equal(t, 5.0, e["dur"])
		case e["ph"] == "s":
			s++
			require.Equal(t, float64(FlowID(8, 3)), e["id"])
		case e["ph"] == "f":
			f++
			require.Equal(t, float64(FlowID(8, 3)), e["id"])
			require.Equal(t, "e", e["bp"])
		}
	}
	require.Equal(t, 1, slices)
	require.Equal(t, 1, parks)
	require.Equal(t, 1, s)
	require.Equal(t, 1, f)
}

// TestEncoderTruncated: a ring that starts inside a slice shows the
// slice from the ring's first event, marked.
func TestEncoderTruncated(t *testing.T) {
	var strs Strings
	var buf bytes.Buffer
	enc := NewEncoder(&buf, []string{"w"}, &strs)
	enc.Add(0, []Event{
		{Kind: KindWake, Task: 2, Time: 100, Flags: Exact},
		{Kind: KindSliceEnd, Task: 1, Reason: EndYield, Time: 300, Flags: Exact},
		{Kind: KindUnpark, Time: 400, Flags: Exact},
	})
	enc.Add(5, nil)
	require.ErrorContains(t, enc.Close(500, 0), "track 5")
	var tf traceFile
	require.NoError(t, json.Unmarshal(buf.Bytes(), &tf), buf.String())
	found := false
	for _, e := range tf.TraceEvents {
		if args, _ := e["args"].(map[string]any); e["cat"] == "task" && args["task"] == float64(1) {
			found = true
			require.Equal(t, "start not recorded", args["note"])
			require.Equal(t, "yield", args["end"])
			require.Equal(t, 0.1, e["ts"])
		}
	}
	require.True(t, found)
}
