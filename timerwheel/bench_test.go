package timerwheel

import (
	"runtime"
	"testing"
	"time"
)

// Side-by-side benchmarks (DESIGN §5): `jade` is this wheel, `goroutine` is
// the Go runtime's timers through time.AfterFunc. Targets:
// TimerInsertCancel ≥ 6× AfterFunc+Stop; Timers1M ≤ 1/4 of AfterFunc's
// ns/insert and ≤ 64 B per pending timer.
//
//	go test -run '^$' -bench 'Timer' -benchmem ./timerwheel

func BenchmarkTimerInsertCancel(b *testing.B) {
	b.Run("jade", func(b *testing.B) {
		w, err := New(DefaultConfig(), 0)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			// 1 s + up to 1 s: levels 1 and 2, as a typical I/O timeout.
			h := w.Insert(int64(time.Second)+int64(i&1023)*ms, uint64(i))
			w.Cancel(h)
		}
	})
	b.Run("goroutine", func(b *testing.B) {
		f := func() {}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			t := time.AfterFunc(time.Second+time.Duration(i&1023)*time.Millisecond, f)
			t.Stop()
		}
	})
}

const timers1M = 1_000_000

// deadline1M spreads the timers over [1 s, ~1 h) in a scrambled order.
func deadline1M(i int) time.Duration {
	return time.Second + time.Duration(uint64(i)*2654435761%3_600_000)*time.Millisecond
}

// BenchmarkTimers1M inserts 1M pending timers per iteration and reports
// ns/insert and the HeapInuse delta per timer (after GC, timers still
// pending; the handle slice is allocated before the baseline for both).
func BenchmarkTimers1M(b *testing.B) {
	measure := func(b *testing.B, insert func() (keep any), stop func(keep any)) {
		var elapsed time.Duration
		var bytes float64
		b.StopTimer()
		for range b.N {
			var m0, m1 runtime.MemStats
			runtime.GC()
			runtime.GC()
			runtime.ReadMemStats(&m0)
			b.StartTimer()
			t0 := time.Now()
			keep := insert()
			elapsed += time.Since(t0)
			b.StopTimer()
			runtime.GC()
			runtime.ReadMemStats(&m1)
			bytes = float64(int64(m1.HeapInuse)-int64(m0.HeapInuse)) / timers1M
			stop(keep)
		}
		b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N*timers1M), "ns/insert")
		b.ReportMetric(bytes, "B/timer")
	}
	b.Run("jade", func(b *testing.B) {
		hs := make([]Handle, timers1M)
		measure(b, func() any {
			w, err := New(DefaultConfig(), 0)
			if err != nil {
				b.Fatal(err)
			}
			for i := range hs {
				hs[i] = w.Insert(int64(deadline1M(i)), uint64(i))
			}
			return w
		}, func(any) {})
	})
	b.Run("goroutine", func(b *testing.B) {
		ts := make([]*time.Timer, timers1M)
		f := func() {}
		measure(b, func() any {
			for i := range ts {
				ts[i] = time.AfterFunc(deadline1M(i), f)
			}
			return nil
		}, func(any) {
			for i, t := range ts {
				t.Stop()
				ts[i] = nil
			}
		})
	})
}

// BenchmarkAdvance measures the owner's per-slice-boundary check (nothing
// due) and firing, with 100k timers pending.
func BenchmarkAdvance(b *testing.B) {
	b.Run("idle-check", func(b *testing.B) {
		w, _ := New(DefaultConfig(), 0)
		for i := range 100_000 {
			w.Insert(int64(time.Hour)+int64(i)*ms, uint64(i))
		}
		var dst []Expired
		now := int64(0)
		for b.Loop() {
			now++
			dst = w.Advance(now, dst[:0])
		}
	})
	b.Run("fire", func(b *testing.B) {
		w, _ := New(DefaultConfig(), 0)
		const pending = 100_000
		for i := range pending {
			w.Insert(int64(i)*ms/10, uint64(i))
		}
		var dst []Expired
		now := int64(0)
		i := pending
		for b.Loop() {
			// Keep 100k pending: one new timer 10 s ahead, time moves by
			// 0.1 ms, about one timer fires.
			i++
			w.Insert(now+int64(10*time.Second), uint64(i))
			now += ms / 10
			dst = w.Advance(now, dst[:0])
		}
	})
}
