package sched_test

import (
	"context"
	"testing"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/vmloop"
)

// chainedSrc is bench's chained spawn: each task spawns the next, n deep,
// and the last signals main.
const chainedSrc = `
.func main(n:i64, ev:ref) -> i64
  .local t:ref
  spawn  t, link, n, ev
  free   t
  evwait ev
  ret    n
.end
.func link(n:i64, ev:ref) -> i64
  .local t:ref, m:i64
  jgti     n, 0, more
  evsignal ev
  ret      n
more:
  subi     m, n, 1
  spawn    t, link, m, ev
  ret      n
.end`

// BenchmarkChainedSpawnLatency is the chained spawn (perf's
// chained_spawn, 10k links) with the latency histograms off
// (LatencySample -1), sampled at the default rate (DefaultLatencySample)
// and at one enqueue in 64, stamping every enqueue, and with per-task
// statistics (TaskStats, which
// also stamps every enqueue of the engine's tasks). "sampled" against
// "off" is the cost of the default; alternate the runs (-count 10) and
// compare with benchstat.
func BenchmarkChainedSpawnLatency(b *testing.B) {
	const n = 10_000
	for _, c := range []struct {
		name string
		opts jade.Options
	}{
		{"off", jade.Options{LatencySample: -1}},
		{"sampled", jade.Options{}},
		{"sampled64", jade.Options{LatencySample: 64}},
		{"every", jade.Options{LatencySample: 1}},
		{"taskstats", jade.Options{TaskStats: true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			c.opts.Workers = 2
			rt, err := jade.New(c.opts)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { rt.Shutdown(context.Background()) })
			p, err := rt.Load("chained.jasm", []byte(chainedSrc))
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := rt.Run(context.Background(), p, "main", vmloop.I64(n), rt.NewEvent()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/task")
		})
	}
}
