//go:build linux

package uring

import (
	"runtime"
	"testing"

	"github.com/jadevm/jade/evpoll"
	"github.com/jadevm/jade/evpoll/evpolltest"
	"github.com/jadevm/jade/sched"
)

// TestDefaultInFlightAboveEngineLimit: with the default options (which
// iosys.Open uses), a backend takes as many ops in flight as the
// scheduler engine allows, and more, so the engine's limit is what a busy
// server meets first, not the backend's ErrTooMany.
func TestDefaultInFlightAboveEngineLimit(t *testing.T) {
	forEachCase(t, nil, func(t *testing.T, _ backendCase, open evpolltest.Opener) {
		evpolltest.ManyInFlight(t, open, sched.DefaultMaxInFlightIO+1)
	})
}

// TestDefaultTableCostsLittle: opening a backend with the default
// MaxInFlight and running a few ops allocates far less than a slot table
// or a pool queue sized for that maximum would (tens of MiB).
func TestDefaultTableCostsLittle(t *testing.T) {
	for _, c := range backendCases {
		t.Run(c.name, func(t *testing.T) {
			runtimeLock(t)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b := openCase(t, c, nil)
			defer b.Close()
			for i := range 8 {
				if _, err := b.Submit(&evpoll.Op{Kind: evpoll.Nop}, evpoll.Token(i+1)); err != nil {
					t.Fatal(err)
				}
			}
			out := make([]evpoll.Completion, 8)
			for got := 0; got < 8; {
				k, err := b.Wait(-1, out)
				if err != nil {
					t.Fatal(err)
				}
				got += k
			}
			runtime.ReadMemStats(&after)
			if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
				t.Fatalf("open and 8 ops allocated %d KiB", d>>10)
			}
		})
	}
}
