package bench

import (
	"io"
	"testing"
)

// BenchmarkChainedSpawnProfiled is the chained spawn of
// BenchmarkChainedSpawn with no Jade profile ("off"), a CPU profile
// ("cpu") and a heap profile ("heap") running. "off" against
// BenchmarkChainedSpawn/jade of a build without package jprof gives the
// cost of the profiler's hooks when off; "cpu" and "heap" against "off"
// the cost of each when on. Alternate the runs (A/B/A/B, -count 10 each)
// and compare with benchstat.
func BenchmarkChainedSpawnProfiled(b *testing.B) {
	const n = 10_000
	for _, mode := range []string{"off", "cpu", "heap"} {
		b.Run(mode, func(b *testing.B) {
			e := envN(b, mnWorkers)
			var err error
			switch mode {
			case "cpu":
				err = e.RT.Observe().StartProfile(io.Discard)
				defer e.RT.Observe().StopProfile()
			case "heap":
				err = e.RT.Observe().StartHeapProfile(io.Discard)
				defer e.RT.Observe().StopHeapProfile()
			}
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := e.ChainedSpawnJade(n); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/task")
		})
	}
}
