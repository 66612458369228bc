package prometheus_test

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/jadevm/jade"
	jadeprom "github.com/jadevm/jade/contrib/prometheus"
)

func TestCollector(t *testing.T) {
	rt, err := jade.New(jade.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	c := jadeprom.NewCollector(rt.Bus().Scheduler())
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	n, err := testutil.GatherAndCount(reg, "jade_live_tasks", "jade_worker_dispatches_total", "jade_engine_reduction_limit")
	if err != nil {
		t.Fatal(err)
	}
	if n != 1+2+1 { // one gauge, one counter per worker, one engine
		t.Fatalf("%d series", n)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP jade_live_tasks Tasks spawned and not completed.
# TYPE jade_live_tasks gauge
jade_live_tasks 0
`), "jade_live_tasks"); err != nil {
		t.Fatal(err)
	}
}
