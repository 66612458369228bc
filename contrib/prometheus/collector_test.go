package prometheus_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/jadevm/jade"
	jadeprom "github.com/jadevm/jade/contrib/prometheus"
	"github.com/jadevm/jade/internal/testkit"
)

func TestCollector(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 2})
	c := jadeprom.NewCollector(rt.Observe())
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	n, err := testutil.GatherAndCount(reg, "jade_live_tasks", "jade_worker_dispatches_total", "jade_engine_reduction_limit")
	require.NoError(t, err)
	if n != 1+2+1 { // one gauge, one counter per worker, one engine
		t.Fatalf("%d series", n)
	}
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP jade_live_tasks Tasks spawned and not completed.
# TYPE jade_live_tasks gauge
jade_live_tasks 0
`), "jade_live_tasks"))
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP jade_inject_kicks_total Slices ended early at a safe point because an outside wake found every worker busy.
# TYPE jade_inject_kicks_total counter
jade_inject_kicks_total 0
`), "jade_inject_kicks_total"))
}

// TestPeriodicSeries: a running periodic job shows up per engine and per
// job (targetRate 1000/s for a 1 ms period).
func TestPeriodicSeries(t *testing.T) {
	rt := testkit.ForcedRuntime(t, jade.Options{Workers: 1})
	p, err := rt.Load("tick.jasm", []byte(`
.abi 1.1
.func main() -> i64
  .local job:ref, p:i64, z:i64, at:i64
  const p, 1000000
  const z, 0
  intr job, time.periodic, p, z
l:
  intr at, time.tick, job
  jmp l
.end
`))
	require.NoError(t, err)
	_, err = rt.Spawn(p, "main")
	require.NoError(t, err)
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(jadeprom.NewCollector(rt.Observe())))
	for i := 0; ; i++ {
		n, err := testutil.GatherAndCount(reg, "jade_job_target_rate")
		require.NoError(t, err)
		if n == 1 {
			break
		}
		if i == 1000 {
			t.Fatal("no job series")
		}
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP jade_engine_periodic_target_rate Runs per second an engine's periodic jobs ask for (targetRate).
# TYPE jade_engine_periodic_target_rate gauge
jade_engine_periodic_target_rate{engine="main"} 1000
`), "jade_engine_periodic_target_rate"))
}
