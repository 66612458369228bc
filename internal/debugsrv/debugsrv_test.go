package debugsrv_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/debugsrv"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

func TestDebugServer(t *testing.T) {
	rt := testkit.ForcedRuntime(t, jade.Options{Workers: 1})
	p, err := rt.Load("w.jasm", []byte(`
.func waiter(ev:ref) -> i64
  .local z:i64
  evwait ev
  const z, 0
  ret z
.end`))
	require.NoError(t, err)
	ev := rt.NewEvent()
	for i := 0; i < 3; i++ {
		_, err := rt.Spawn(p, "waiter", ev)
		require.NoError(t, err)
	}
	s := hostbus.Scheduler(rt)
	deadline := time.Now().Add(10 * time.Second)
	for s.WaitingTasks() != 3 {
		if time.Now().After(deadline) {
			t.Fatal("tasks did not park")
		}
		time.Sleep(time.Millisecond)
	}
	debugsrv.Publish("jade_test", s)
	srv := httptest.NewServer(debugsrv.Handler(s))
	defer srv.Close()
	get := func(path string) string {
		resp, err := srv.Client().Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	if txt := get("/debug/tasks"); strings.Count(txt, "Waiting") != 3 || !strings.Contains(txt, "waiter@") {
		t.Errorf("tasks page:\n%s", txt)
	}
	var m sched.Metrics
	if err := json.Unmarshal([]byte(get("/debug/metrics")), &m); err != nil || m.WaitingTasks != 3 || m.LiveTasks != 3 {
		t.Errorf("metrics: %+v %v", m, err)
	}
	if vars := get("/debug/vars"); !strings.Contains(vars, `"jade_test"`) || !strings.Contains(vars, "waitingTasks") {
		t.Errorf("expvar missing the snapshot")
	}
	if !strings.Contains(get("/debug/pprof/"), "goroutine") {
		t.Error("pprof index")
	}
	// Reading changed nothing.
	if s.WaitingTasks() != 3 {
		t.Error("a read mutated the scheduler")
	}
	var buf bytes.Buffer
	debugsrv.DumpTasks(&buf, s)
	if !strings.Contains(buf.String(), "3 live tasks") {
		t.Errorf("dump: %s", buf.String())
	}
	rt.Broadcast(ev)
	_ = vmloop.I64
}
