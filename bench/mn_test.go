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

// BenchmarkHandOff: a busy task hands one task at a time to a worker
// that parks between them (the park, the wake and whatever a park costs
// the busy worker: docs/PERFORMANCE.md, "A push without a locked store,
// tried and dropped").
func BenchmarkHandOff(b *testing.B) {
	const n, spin = 10_000, 300
	perUnit(b, n, "ns/round", func(e *Env) error { return e.HandOffJade(n, spin) }, func() { HandOffGo(n, spin) })
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

// BenchmarkFairness: workers + 1 hogs on mnWorkers workers (goroutines at
// GOMAXPROCS = mnWorkers); a ticker's lateness against its schedule,
// start + i × 1 ms, in two shapes: timer (the ticker sleeps to each
// deadline) and outside_wake (a host goroutine wakes it at each deadline;
// lateness is dispatch − deadline). Targets: p99.9 <= the S-6 bound
// ((queued ahead + 1) × p99 slice), p99 <= 1/100 of the goroutines'.
func BenchmarkFairness(b *testing.B) {
	const ticks = 500
	hogs := mnWorkers + 1
	shapes := []struct {
		name string
		jade func(e *Env) (Fairness, error)
		gor  func() Fairness
	}{
		{"timer", func(e *Env) (Fairness, error) { return e.FairnessTimerJade(hogs, ticks) }, func() Fairness { return FairnessTimerGo(hogs, ticks) }},
		{"outside_wake", func(e *Env) (Fairness, error) { return e.FairnessWakeJade(hogs, ticks) }, func() Fairness { return FairnessWakeGo(hogs, ticks) }},
	}
	for _, sh := range shapes {
		b.Run(sh.name+"/jade", func(b *testing.B) {
			e := envN(b, mnWorkers)
			slice, err := e.SliceTime()
			if err != nil {
				b.Fatal(err)
			}
			var f Fairness
			for b.Loop() {
				if f, err = sh.jade(e); err != nil {
					b.Fatal(err)
				}
			}
			reportLatUS(b, f.Ticker)
			b.ReportMetric(f.HogRate, "hog-units/s")
			b.ReportMetric(float64(slice.Nanoseconds())/1e3, "p99-slice-µs")
			b.ReportMetric(float64(S6Bound(hogs, mnWorkers, slice).Nanoseconds())/1e3, "bound-µs")
		})
		b.Run(sh.name+"/goroutine", func(b *testing.B) {
			var f Fairness
			WithProcs(mnWorkers, func() {
				for b.Loop() {
					f = sh.gor()
				}
			})
			reportLatUS(b, f.Ticker)
			b.ReportMetric(f.HogRate, "hog-units/s")
		})
	}
}

// reportLatUS reports l's percentiles in microseconds.
func reportLatUS(b *testing.B, l Latencies) {
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	b.ReportMetric(us(l.P50), "p50-µs")
	b.ReportMetric(us(l.P99), "p99-µs")
	b.ReportMetric(us(l.P999), "p999-µs")
	b.ReportMetric(us(l.Max), "max-µs")
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

// BenchmarkBlockingTicker: 1,000 tasks each make one 10 ms blocking host
// call (RegisterBlockingIntrinsic, pool 64) on one worker while a 1 ms
// ticker sleeps to each deadline; its lateness against the schedule,
// beside the calls (beside/) and alone afterwards (alone/), from one run.
func BenchmarkBlockingTicker(b *testing.B) {
	e := envN(b, 1)
	var r BlockingTicker
	for b.Loop() {
		var err error
		if r, err = e.BlockingTickerJade(1000, 10*time.Millisecond, 150); err != nil {
			b.Fatal(err)
		}
	}
	if r.Calls != 1000 {
		b.Fatalf("%d blocking calls completed, want 1000", r.Calls)
	}
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	b.ReportMetric(us(r.Ticker.P50), "beside-p50-µs")
	b.ReportMetric(us(r.Ticker.P99), "beside-p99-µs")
	b.ReportMetric(us(r.Ticker.Max), "beside-max-µs")
	b.ReportMetric(us(r.Alone.P50), "alone-p50-µs")
	b.ReportMetric(us(r.Alone.P99), "alone-p99-µs")
	b.ReportMetric(us(r.Alone.Max), "alone-max-µs")
}

// BenchmarkSliceTimeIntrinsics: the wall time of one slice of a loop of
// plain instructions and of a loop of requests to the scheduler
// (chan.len), each alone on one worker; the two should be of a size (S-6
// counts waits in slices).
func BenchmarkSliceTimeIntrinsics(b *testing.B) {
	for _, c := range []struct {
		prog string
		n    int
	}{{"plain_loop", 20_000_000}, {"request_loop", 2_000_000}} {
		b.Run(c.prog, func(b *testing.B) {
			e := envN(b, 1)
			var d time.Duration
			for b.Loop() {
				var err error
				if d, err = e.SliceTimeOf(c.prog, c.n); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(d.Nanoseconds())/1e3, "slice-µs")
		})
	}
}
