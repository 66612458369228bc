package sched

import "testing"

// BenchmarkTimerHold: what the hold word adds to each of the owner's timer
// operations (insert, local cancel, fire): an uncontended CAS and a store
// on a line only the owner writes.
func BenchmarkTimerHold(b *testing.B) {
	var wt workerTimers
	for range b.N {
		wt.lock()
		wt.unlock()
	}
}
