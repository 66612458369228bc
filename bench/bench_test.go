package bench

import (
	"os"
	"strconv"
	"testing"
)

// workers is Jade's worker count in these benchmarks; every Go baseline
// runs at GOMAXPROCS = workers (the same parallelism on both sides).
const workers = 1

func env(b *testing.B) *Env {
	b.Helper()
	e, err := NewEnv(workers)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(e.Close)
	return e
}

func BenchmarkSpawnJoin(b *testing.B) {
	b.Run("jade", func(b *testing.B) {
		e := env(b)
		b.ResetTimer()
		if err := e.SpawnJoinJade(b.N); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("goroutine", func(b *testing.B) {
		WithProcs(workers, func() { SpawnJoinGo(b.N) })
	})
}

func BenchmarkPingPong(b *testing.B) {
	b.Run("jade", func(b *testing.B) {
		e := env(b)
		b.ResetTimer()
		if err := e.PingPongJade(b.N); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("goroutine", func(b *testing.B) {
		WithProcs(workers, func() { PingPongGo(b.N) })
	})
}

func BenchmarkYield(b *testing.B) {
	b.Run("jade", func(b *testing.B) {
		e := env(b)
		b.ResetTimer()
		if err := e.YieldJade(b.N); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("goroutine", func(b *testing.B) {
		WithProcs(workers, func() { YieldGo(b.N) })
	})
}

func BenchmarkFib30(b *testing.B) {
	b.Run("jade-go", func(b *testing.B) {
		e := env(b)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if v, err := e.FibJadeGo(30); err != nil || v != 832040 {
				b.Fatal(v, err)
			}
		}
	})
	b.Run("jade-native", func(b *testing.B) {
		if !NativeLoop() {
			b.Skip("the cgo loop is not available in this build (CGO_ENABLED=0, -tags purego or JADE_NATIVE=0)")
		}
		e := env(b)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if v, err := e.FibJade(30); err != nil || v != 832040 {
				b.Fatal(v, err)
			}
		}
	})
	b.Run("gopherlua", func(b *testing.B) {
		L, fn, err := NewLua()
		if err != nil {
			b.Fatal(err)
		}
		defer L.Close()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if v, err := FibLua(L, fn); err != nil || v != 832040 {
				b.Fatal(v, err)
			}
		}
	})
}

// parkedWaiters is the waiter count of BenchmarkParkedTaskBytes: 100,000,
// or JADE_PARKED_N when set (the figure is at 1,000,000, where the
// waiter list and the spawner's handle table are large enough for their
// growth to show).
func parkedWaiters(b *testing.B) int {
	if v := os.Getenv("JADE_PARKED_N"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("bench: JADE_PARKED_N=%s: want a waiter count >= 1", v)
		}
		return n
	}
	return 100_000
}

func BenchmarkParkedTaskBytes(b *testing.B) {
	parkedN := parkedWaiters(b)
	b.Run("jade", func(b *testing.B) {
		e := env(b)
		var m ParkedMem
		for i := 0; i < b.N; i++ {
			v, err := e.ParkedJadeMem(parkedN)
			if err != nil {
				b.Fatal(err)
			}
			m = v
		}
		reportParked(b, m)
	})
	b.Run("goroutine", func(b *testing.B) {
		var m ParkedMem
		for i := 0; i < b.N; i++ {
			m = ParkedGoMem(parkedN)
		}
		reportParked(b, m)
	})
}

func reportParked(b *testing.B, m ParkedMem) {
	b.ReportMetric(m.Heap, "bytes/task")
	b.ReportMetric(m.RSS, "rss-bytes/task")
	b.ReportMetric(m.PeakRSS, "peak-rss-bytes/task")
}
