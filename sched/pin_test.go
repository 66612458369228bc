package sched

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
)

type nopDispatcher struct{}

func (nopDispatcher) Intrinsic(*Task, *vmloop.Request) Action { return ActTrapped }
func (nopDispatcher) Resume(*Task, *vmloop.Request) Action    { return ActTrapped }
func (nopDispatcher) Abandon(*Task, *vmloop.Request, bool)    {}

// TestPinCPUs: with PinCPUs each worker gets a CPU of the affinity mask
// (round robin) on Linux, none elsewhere; the workers start and stop, and
// pinned threads do not go back to Go's pool (a thread picked up later
// still has the whole mask).
func TestPinCPUs(t *testing.T) {
	before := allowedCPUs()
	s, c, err := New(Config{Workers: 3, PinCPUs: true, Dispatcher: nopDispatcher{}})
	require.NoError(t, err)
	for i, w := range s.workers {
		switch {
		case !pinSupported || len(before) == 0:
			if w.cpu != -1 {
				t.Fatalf("worker %d pinned to %d where pinning is a no-op", i, w.cpu)
			}
		case w.cpu != before[i%len(before)]:
			t.Fatalf("worker %d → CPU %d, want %d", i, w.cpu, before[i%len(before)])
		}
	}
	require.NoError(t, c.Start())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c.Shutdown(ctx)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if after := allowedCPUs(); !slices.Equal(before, after) {
		t.Fatalf("affinity of a pool thread changed: %v → %v", before, after)
	}
}
