package jtrace

import (
	"strconv"
	"testing"
)

// BenchmarkNext is one event written in place into a flight ring (the
// writer's cost per event, without the hook around it): of 8192 events,
// and of two chunks (in cache).
func BenchmarkNext(b *testing.B) {
	for _, n := range []int{8192, 1} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			now, _ := clock()
			r := NewFlight(0, n, now)
			for i := 0; b.Loop(); i++ {
				e := r.Next(0)
				e.Kind, e.Task, e.Arg = KindWake, uint64(i), 7
			}
		})
	}
}

// BenchmarkEmit is BenchmarkNext with the event built by the writer and
// copied into its slot by Emit (the scheduler's hooks).
func BenchmarkEmit(b *testing.B) {
	for _, n := range []int{8192, 1} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			now, _ := clock()
			r := NewFlight(0, n, now)
			for i := 0; b.Loop(); i++ {
				r.Emit(Event{Kind: KindWake, Task: uint64(i), Arg: 7})
			}
		})
	}
}
