package debugsrv_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/debugsrv"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
)

// TestTaskDumpAndMetrics: the dump and /debug/tasks show a task's name,
// file:line, what it waits for, statistics and Jade stack with file:line; /debug/metrics and
// /debug/vars carry the latency histograms and the worker times.
func TestTaskDumpAndMetrics(t *testing.T) {
	rt := testkit.ForcedRuntime(t, jade.Options{Workers: 1, TaskStats: true, LatencySample: 1})
	p, err := rt.Load("w.jasm", []byte(`.func waiter(ev:ref) -> i64
  .local z:i64
  yield
  evwait ev
  const z, 0
  ret z
.end`))
	require.NoError(t, err)
	ev := rt.NewEvent()
	_, err = rt.SpawnWith(jade.SpawnOptions{Name: "conn-7"}, p, "waiter", ev)
	require.NoError(t, err)
	s := hostbus.Scheduler(rt)
	deadline := time.Now().Add(time.Minute)
	for s.WaitingTasks() != 1 {
		require.False(t, time.Now().After(deadline), "the task did not park")
		time.Sleep(time.Millisecond)
	}
	var buf bytes.Buffer
	debugsrv.DumpTasks(&buf, s)
	require.Contains(t, buf.String(), `"conn-7" at w.jasm:4 (waiter) in event.wait for event ev`)
	require.Contains(t, buf.String(), "(2 slices, ")
	require.Contains(t, buf.String(), "(w.jasm:4)")

	srv := httptest.NewServer(debugsrv.Handler(s))
	defer srv.Close()
	get := func(path string) []byte {
		resp, err := srv.Client().Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, 200, resp.StatusCode, "%s: %s", path, b)
		return b
	}
	var ts []sched.TaskReport
	require.NoError(t, json.Unmarshal(get("/debug/tasks?format=json"), &ts))
	require.Len(t, ts, 1)
	require.Equal(t, "conn-7", ts[0].Name)
	require.Equal(t, int64(2), ts[0].Stats.Slices)
	require.Equal(t, []sched.Frame{{Func: "waiter", PC: ts[0].Stack[0].PC, File: "w.jasm", Line: 4}}, ts[0].Stack)
	require.Equal(t, 4, ts[0].Line)
	require.Equal(t, &sched.Wait{Op: "event.wait", Kind: sched.WaitEvent, For: "event ev"}, ts[0].Wait)

	var m sched.Metrics
	require.NoError(t, json.Unmarshal(get("/debug/metrics"), &m))
	require.Equal(t, uint64(2), m.Engines[0].Latency.RunQueue.Count, "two dispatches, both stamped")
	require.Positive(t, m.Workers[0].Times.WallNs)
	debugsrv.Publish("jade_metrics_test", s)
	var vars map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(get("/debug/vars"), &vars))
	require.NoError(t, json.Unmarshal(vars["jade_metrics_test"], &m))
	require.Equal(t, 1, m.Engines[0].Latency.SampleEvery)
	require.NotEmpty(t, m.Engines[0].Latency.RunQueue.BoundsNs)
	require.NoError(t, rt.Broadcast(ev))
}
