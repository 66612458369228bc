package jtrace

import "testing"

// BenchmarkNext is one event written in place into a flight ring of
// 8192 events (the writer's cost per event, without the hook around it).
func BenchmarkNext(b *testing.B) {
	now, _ := clock()
	r := NewFlight(0, 8192, now)
	for i := 0; b.Loop(); i++ {
		e := r.Next(0)
		e.Kind, e.Task, e.Arg = KindWake, uint64(i), 7
	}
}

// BenchmarkNextSmall is BenchmarkNext on a ring of two chunks (in cache).
func BenchmarkNextSmall(b *testing.B) {
	now, _ := clock()
	r := NewFlight(0, 1, now)
	for i := 0; b.Loop(); i++ {
		e := r.Next(0)
		e.Kind, e.Task, e.Arg = KindWake, uint64(i), 7
	}
}
