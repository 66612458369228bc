package bench

import (
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// mnWorkers is the worker count of the M:N benchmarks: 2 (the machine has
// 2 CPUs), or JADE_BENCH_WORKERS when set (for scaling runs on larger
// machines); the goroutine baselines run at GOMAXPROCS = mnWorkers.
var mnWorkers = benchWorkers()

func benchWorkers() int {
	if v := os.Getenv("JADE_BENCH_WORKERS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			panic("bench: JADE_BENCH_WORKERS=" + v + ": want a worker count >= 1")
		}
		return n
	}
	return 2
}

func envN(b *testing.B, workers int) *Env {
	b.Helper()
	e, err := NewEnv(workers)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(e.Close)
	return e
}

// perUnit runs jade (on a runtime with mnWorkers workers) and goroutine (at
// GOMAXPROCS mnWorkers) as sub-benchmarks and reports time per unit, each
// call doing units of them.
func perUnit(b *testing.B, units int, unit string, jade func(e *Env) error, goroutine func()) {
	b.Run("jade", func(b *testing.B) {
		e := envN(b, mnWorkers)
		for b.Loop() {
			if err := jade(e); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*units), unit)
	})
	b.Run("goroutine", func(b *testing.B) {
		WithProcs(mnWorkers, func() {
			for b.Loop() {
				goroutine()
			}
		})
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*units), unit)
	})
}

func BenchmarkSpawnMany(b *testing.B) {
	const n = 10_000
	perUnit(b, n, "ns/task", func(e *Env) error { return e.SpawnManyJade(n) }, func() { SpawnManyGo(n) })
}
func BenchmarkChainedSpawn(b *testing.B) {
	const n = 10_000
	perUnit(b, n, "ns/task", func(e *Env) error { return e.ChainedSpawnJade(n) }, func() { ChainedSpawnGo(n) })
}
func BenchmarkYieldMany(b *testing.B) {
	const k, m = 100, 1000
	perUnit(b, k*m, "ns/yield", func(e *Env) error { return e.YieldManyJade(k, m) }, func() { YieldManyGo(k, m) })
}
func reportLat(b *testing.B, l Latencies) {
	b.ReportMetric(float64(l.P50.Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(l.P99.Nanoseconds()), "p99-ns")
	b.ReportMetric(float64(l.P999.Nanoseconds()), "p99.9-ns")
	b.ReportMetric(float64(l.Max.Nanoseconds()), "max-ns")
}

// latencyPair runs jade (1 worker) and goroutine (GOMAXPROCS 1) as
// sub-benchmarks and reports the last run's latency percentiles.
func latencyPair(b *testing.B, jade func(e *Env) (Latencies, error), goroutine func() Latencies) {
	b.Run("jade", func(b *testing.B) {
		e := envN(b, 1)
		var l Latencies
		for b.Loop() {
			var err error
			if l, err = jade(e); err != nil {
				b.Fatal(err)
			}
		}
		reportLat(b, l)
	})
	b.Run("goroutine", func(b *testing.B) {
		var l Latencies
		WithProcs(1, func() {
			for b.Loop() {
				l = goroutine()
			}
		})
		reportLat(b, l)
	})
}

func BenchmarkWakeLatency(b *testing.B) {
	const n = 2000
	latencyPair(b, func(e *Env) (Latencies, error) { return e.WakeLatencyJade(n) }, func() Latencies { return WakeLatencyGo(n) })
}

// BenchmarkSleepLateness: lateness of a 1 ms sleep (time.sleep in a task
// vs time.Sleep in a goroutine); target: p99 no worse than time.Sleep's.
func BenchmarkSleepLateness(b *testing.B) {
	const n = 500
	latencyPair(b, func(e *Env) (Latencies, error) { return e.SleepLatenessJade(n, time.Millisecond) },
		func() Latencies { return SleepLatenessGo(n, time.Millisecond) })
}

// BenchmarkFairness: 4 hogs on 2 workers; a host goroutine wakes a ticker
// task every millisecond; the S-6 bound is (queued ahead + 1) × slice.
func BenchmarkFairness(b *testing.B) {
	const hogs, ticks = 4, 500
	b.Run("jade", func(b *testing.B) {
		e := envN(b, mnWorkers)
		var f Fairness
		for b.Loop() {
			var err error
			if f, err = e.FairnessJade(hogs, ticks); err != nil {
				b.Fatal(err)
			}
		}
		reportLat(b, f.Ticker)
		b.ReportMetric(f.HogRate, "hog-units/s")
		b.ReportMetric(float64(f.Slice.Nanoseconds()), "slice-ns")
		b.ReportMetric(float64(f.Bound.Nanoseconds()), "bound-ns")
	})
	b.Run("goroutine", func(b *testing.B) {
		var f Fairness
		WithProcs(mnWorkers, func() {
			for b.Loop() {
				f = FairnessGo(hogs, ticks)
			}
		})
		reportLat(b, f.Ticker)
		b.ReportMetric(f.HogRate, "hog-units/s")
	})
}

// BenchmarkIdleWakeups: context switches of each worker thread over an
// idle second (target 0), beside the process-wide figure for an idle
// second before the runtime started.
func BenchmarkIdleWakeups(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc/self/task")
	}
	p0, err := ProcessSwitches()
	if err != nil {
		b.Skip(err)
	}
	time.Sleep(time.Second)
	p1, _ := ProcessSwitches()
	e := envN(b, mnWorkers)
	var worst, proc int64
	for b.Loop() {
		per, p, err := e.IdleWakeups(time.Second)
		if err != nil {
			b.Fatal(err)
		}
		worst, proc = 0, p
		for _, n := range per {
			worst = max(worst, n)
		}
	}
	b.ReportMetric(float64(worst), "switches/worker")
	b.ReportMetric(float64(proc), "switches/process")
	b.ReportMetric(float64(p1-p0), "switches/idle-go-process")
}
