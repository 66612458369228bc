package bench

import "testing"

// BenchmarkLongStepTicker reports the lateness of a 1 ms ticker beside one
// task per worker repeating each long step (LongStepTicker), 300 ticks per
// run: p50, p99, p99.9 and max in ns against the schedule.
func BenchmarkLongStepTicker(b *testing.B) {
	for _, step := range LongSteps {
		b.Run(step, func(b *testing.B) {
			var l Latencies
			for b.Loop() {
				var err error
				if l, err = LongStepTicker(mnWorkers, step, 300); err != nil {
					b.Fatal(err)
				}
			}
			reportLat(b, l)
		})
	}
}
