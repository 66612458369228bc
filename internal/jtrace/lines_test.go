package jtrace

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEncoderLocations: a function given with its lines (Strings.Func) is
// located as "file:line (function)", two of one name apart; one without
// lines, or a pc without a line, as "function@pc".
func TestEncoderLocations(t *testing.T) {
	var strs Strings
	a := strs.Func("conn", func(pc int) (string, int) {
		if pc == 54 {
			return "echo.jasm", 31
		}
		return "echo.jasm", 0
	})
	b := strs.Func("conn", func(pc int) (string, int) { return "other.jasm", 9 })
	bare := strs.Func("conn", nil)
	require.NotEqual(t, a, b)
	var buf bytes.Buffer
	enc := NewEncoder(&buf, []string{"worker 0"}, &strs)
	enc.Add(0, []Event{
		{Kind: KindDispatch, Task: 1, Fn: a, PC: 54, Time: 1000, Flags: Exact},
		{Kind: KindSliceEnd, Task: 1, Fn: a, PC: 55, Reason: EndSuspend, Time: 2000, Flags: Exact},
		{Kind: KindDispatch, Task: 2, Fn: b, PC: 3, Time: 3000, Flags: Exact},
		{Kind: KindSliceEnd, Task: 2, Fn: bare, PC: 7, Reason: EndYield, Time: 4000, Flags: Exact},
	})
	require.NoError(t, enc.Close(5000, 0))
	var tf traceFile
	require.NoError(t, json.Unmarshal(buf.Bytes(), &tf), buf.String())
	got := map[float64][2]any{}
	for _, e := range tf.TraceEvents {
		if args, _ := e["args"].(map[string]any); e["ph"] == "X" && e["cat"] == "task" {
			got[args["task"].(float64)] = [2]any{args["at"], args["endAt"]}
		}
	}
	require.Equal(t, [2]any{"echo.jasm:31 (conn)", "conn@55"}, got[1])
	require.Equal(t, [2]any{"other.jasm:9 (conn)", "conn@7"}, got[2])
}
