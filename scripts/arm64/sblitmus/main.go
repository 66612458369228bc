// Command sblitmus is the store-buffering litmus test on Go's atomics:
//
//	x.Store(1); r1 := y.Load()   ||   y.Store(1); r2 := x.Load()
//
// Sequential consistency, which sync/atomic promises, forbids r1 == 0 and
// r2 == 0 in the same round. On arm64 Go compiles Store to STLR and Load
// to LDAR, which the architecture keeps in order; qemu-user on an x86-64
// host translates them to a barrier before the store and one after the
// load, nothing between them, so the host's store buffer lets the load
// pass the store and both loads can read 0. It prints how many rounds did,
// for -mode store (Store then Load) and for -mode swap (Swap then Load,
// a read-modify-write that the host orders), and exits 1 when a round of
// the mode asked for broke sequential consistency.
//
//	GOARCH=arm64 go build -o sblitmus ./scripts/arm64/sblitmus
//	qemu-aarch64-static ./sblitmus -n 1000000
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
)

// padded keeps x and y on separate cache lines.
type padded struct {
	v atomic.Int64
	_ [120]byte
}

func main() {
	n := flag.Int("n", 1_000_000, "rounds")
	mode := flag.String("mode", "store", "store (atomic Store, then Load) or swap (Swap, then Load)")
	flag.Parse()
	if *mode != "store" && *mode != "swap" {
		fmt.Fprintf(os.Stderr, "sblitmus: unknown -mode %q\n", *mode)
		os.Exit(2)
	}
	runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), 3))
	var x, y padded
	var start, done atomic.Int64
	var r2 int64
	set := func(p *padded) {
		if *mode == "swap" {
			p.v.Swap(1)
		} else {
			p.v.Store(1)
		}
	}
	go func() {
		for i := int64(1); i <= int64(*n); i++ {
			for start.Load() != i {
			}
			set(&x)
			r2 = y.v.Load()
			done.Store(i)
		}
	}()
	both := 0
	for i := int64(1); i <= int64(*n); i++ {
		x.v.Store(0)
		y.v.Store(0)
		start.Store(i)
		set(&y)
		r1 := x.v.Load()
		for done.Load() != i {
		}
		if r1 == 0 && r2 == 0 {
			both++
		}
	}
	fmt.Printf("sblitmus: %s then Load, %d rounds: %d with both loads 0 (sequential consistency forbids any)\n", *mode, *n, both)
	if both > 0 {
		os.Exit(1)
	}
}
