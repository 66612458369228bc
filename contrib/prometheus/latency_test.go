package prometheus_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jadevm/jade"
	jadeprom "github.com/jadevm/jade/contrib/prometheus"
	"github.com/jadevm/jade/internal/testkit"
)

// TestLatencyHistograms: the run-queue histogram is a Prometheus
// histogram with one sample per dispatch (every enqueue sampled), bounds
// at the powers of two from 128 ns, cumulative counts ending at the
// total; the worker times are there.
func TestLatencyHistograms(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1, LatencySample: 1})
	// Two tasks yielding on one worker: each yield requeues behind the
	// other (a lone yield goes on in its slice), so every dispatch after
	// the first is a requeue's, and each is sampled.
	p, err := rt.Load("y.jasm", []byte(`
.func main() -> i64
  .local z:i64, t:ref
  spawn t, other
  yield
  yield
  joini z, t
  ret z
.end
.func other() -> i64
  .local z:i64
  yield
  yield
  const z, 0
  ret z
.end`))
	require.NoError(t, err)
	_, err = rt.Run(context.Background(), p, "main")
	require.NoError(t, err)
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(jadeprom.NewCollector(rt.Observe())))
	mfs, err := reg.Gather()
	require.NoError(t, err)
	found := map[string]bool{}
	for _, mf := range mfs {
		found[mf.GetName()] = true
		if mf.GetName() != "jade_engine_run_queue_latency_seconds" {
			continue
		}
		h := mf.GetMetric()[0].GetHistogram()
		if d := rt.Observe().Metrics().Workers[0].Dispatches; h.GetSampleCount() != d || d < 4 {
			t.Errorf("%d samples, want one per dispatch (%d, at least 4)", h.GetSampleCount(), d)
		}
		bs := h.GetBucket()
		if len(bs) != 31 || bs[0].GetUpperBound() != 64e-9 {
			t.Fatalf("%d buckets from %g", len(bs), bs[0].GetUpperBound())
		}
		for i := 1; i < len(bs); i++ {
			if bs[i].GetUpperBound() != 2*bs[i-1].GetUpperBound() || bs[i].GetCumulativeCount() < bs[i-1].GetCumulativeCount() {
				t.Fatalf("bucket %d: %v after %v", i, bs[i], bs[i-1])
			}
		}
	}
	for _, name := range []string{"jade_engine_run_queue_latency_seconds", "jade_engine_wake_latency_seconds",
		"jade_engine_timer_lateness_seconds", "jade_worker_busy_seconds_total", "jade_worker_utilisation"} {
		if !found[name] {
			t.Errorf("no %s", name)
		}
	}
}
