package bench

import (
	"io"
	"testing"
)

// BenchmarkChainedSpawnTraced is BenchmarkChainedSpawn's Jade side with a
// full scheduler trace (jade.Observer.StartTrace) encoded to io.Discard
// meanwhile: the cost of a trace (docs/PERFORMANCE.md, "The scheduler trace and the flight recorder"). The flight
// recorder's cost is BenchmarkChainedSpawn under JADE_FLIGHT=1.
func BenchmarkChainedSpawnTraced(b *testing.B) {
	const n = 10_000
	e := envN(b, mnWorkers)
	if err := e.RT.Observe().StartTrace(io.Discard); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := e.ChainedSpawnJade(n); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/task")
	b.StopTimer()
	if err := e.RT.Observe().StopTrace(); err != nil {
		b.Fatal(err)
	}
}
