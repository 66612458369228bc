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

// BenchmarkTake is BenchmarkNext with the slot from Take, inlined, or
// else Next, and every field stored.
func BenchmarkTake(b *testing.B) {
	for _, n := range []int{8192, 1} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			now, _ := clock()
			r := NewFlight(0, n, now)
			for i := 0; b.Loop(); i++ {
				e := r.Take()
				if e == nil {
					e = r.Next(0)
				}
				e.Kind, e.Task, e.Arg, e.Fn, e.PC, e.Flow, e.Reason = KindWake, uint64(i), 7, 0, 0, 0, 0
			}
		})
	}
}
