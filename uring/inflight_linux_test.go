//go:build linux

package uring

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/evpoll/evpolltest"
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
				_, err := b.Submit(&evpoll.Op{Kind: evpoll.Nop}, evpoll.Token(i+1))
				require.NoError(t, err)
			}
			out := make([]evpoll.Completion, 8)
			for got := 0; got < 8; {
				k, err := b.Wait(-1, out)
				require.NoError(t, err)
				got += k
			}
			runtime.ReadMemStats(&after)
			if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
				t.Fatalf("open and 8 ops allocated %d KiB", d>>10)
			}
		})
	}
}

// TestErrorsNameBackend: a backend's errors name it, epoll's as "epoll:"
// and io_uring's as "uring:", and still wrap the evpoll errors.
func TestErrorsNameBackend(t *testing.T) {
	forEachBackend(t, func(o *Options) { o.MaxInFlight = 1 }, func(t *testing.T, h *harness) {
		prefix := map[bool]string{true: "uring: ", false: "epoll: "}[h.c.ring]
		check := func(what string, err, target error) {
			t.Helper()
			if !errors.Is(err, target) || !strings.HasPrefix(err.Error(), prefix+what+": ") {
				t.Errorf("%s: %v, want %q… wrapping %v", what, err, prefix+what+": ", target)
			}
		}
		h.Submit(&evpoll.Op{Kind: evpoll.Nop}, 1)
		_, err := h.B.Submit(&evpoll.Op{Kind: evpoll.Nop}, 2)
		check("submit", err, evpoll.ErrTooMany)
		h.OK(1)
		check("cancel", h.B.Cancel(1<<40), evpoll.ErrNotPending)
		_, err = h.B.Wait(0, nil)
		check("wait", err, evpoll.ErrInvalidOp)
		require.NoError(t, h.B.Close())
		_, err = h.B.Submit(&evpoll.Op{Kind: evpoll.Nop}, 3)
		check("submit", err, evpoll.ErrClosed)
		_, err = h.B.Wait(0, make([]evpoll.Completion, 1))
		check("wait", err, evpoll.ErrClosed)
		check("wake", h.B.Wake(), evpoll.ErrClosed)
	})
}
