//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/sched"
)

// yieldsThenWaits: main and a task it spawns each yield 100 times on one
// worker (startDebugRun), so that every yield requeues behind the other
// (a yield with nothing else to run goes on in its slice); then main
// waits on an event for ever, so that the debug server can be read.
const yieldsThenWaits = `.func main() -> i64
  .local ev:ref, i:i64, z:i64, t:ref
  spawn t, other
  const i, 100
again:
  yield
  subi i, i, 1
  jgti i, 0, again
  evnew ev
  evwait ev
  const z, 0
  ret z
.end
.func other() -> i64
  .local i:i64
  const i, 100
again:
  yield
  subi i, i, 1
  jgti i, 0, again
  ret i
.end
`

// startDebugRun starts `jade run` with args and --debug-addr and returns
// the debug server's base URL; the process is killed at the end.
func startDebugRun(t *testing.T, args ...string) string {
	t.Helper()
	path := write(t, "w.jasm", yieldsThenWaits)
	cmd := exec.Command(jadeBinary(t), append(append([]string{"run", "--workers", "1", "--debug-addr", "127.0.0.1:0"}, args...), path)...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	url := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if l := sc.Text(); strings.Contains(l, "debug server on http://") {
				url <- strings.Fields(l[strings.Index(l, "http://"):])[0]
			}
		}
	}()
	select {
	case u := <-url:
		return u
	case <-time.After(10 * time.Second):
		t.Fatal("no debug server announced on stderr")
		return ""
	}
}

// get reads url until cond holds for its body (the task may not have
// reached its wait yet), and returns the last body.
func get(t *testing.T, url string, cond func(string) bool) string {
	t.Helper()
	var body string
	for range 250 {
		if resp, err := http.Get(url); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if body = string(b); cond(body) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return body
}

// mainLatency is the run-queue histogram of the engine "main" in a
// /debug/metrics snapshot.
func mainLatency(t *testing.T, body string) sched.LatencyMetrics {
	t.Helper()
	var m sched.Metrics
	require.NoError(t, json.Unmarshal([]byte(body), &m), body)
	for _, e := range m.Engines {
		if e.Name == "main" {
			return e.Latency
		}
	}
	t.Fatalf("no engine main in %s", body)
	return sched.LatencyMetrics{}
}

// TestTaskStatsFlag: --task-stats shows each task's slices, reductions and
// time Runnable on /debug/tasks; without it the page has none.
func TestTaskStatsFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{{[]string{"--task-stats"}, true}, {nil, false}} {
		url := startDebugRun(t, c.args...)
		page := get(t, url+"tasks", func(p string) bool { return strings.Contains(p, "Waiting") })
		require.Contains(t, page, "main@")
		require.Equal(t, c.want, strings.Contains(page, " slices, "), "args %v:\n%s", c.args, page)
		if c.want {
			require.NotContains(t, page, "(0 slices", "the task yielded 100 times:\n%s", page)
		}
	}
}

// TestLatencySampleFlag: --latency-sample 1 timestamps every enqueue (the
// 100 yields show in the run-queue histogram), -1 none.
func TestLatencySampleFlag(t *testing.T) {
	url := startDebugRun(t, "--latency-sample", "1")
	// The debug server answers before main has run: wait for the waiting
	// task (its 100 yields are behind it then).
	get(t, url+"tasks", func(p string) bool { return strings.Contains(p, "Waiting") })
	lat := mainLatency(t, get(t, url+"metrics", func(b string) bool { return strings.Contains(b, `"engines"`) }))
	require.Equal(t, 1, lat.SampleEvery)
	require.GreaterOrEqual(t, lat.RunQueue.Count, uint64(100), "every yield's requeue is a sample: %+v", lat)

	url = startDebugRun(t, "--latency-sample", "-1")
	get(t, url+"tasks", func(p string) bool { return strings.Contains(p, "Waiting") })
	lat = mainLatency(t, get(t, url+"metrics", func(b string) bool { return strings.Contains(b, `"engines"`) }))
	require.Zero(t, lat.SampleEvery)
	require.Zero(t, lat.RunQueue.Count)
}
