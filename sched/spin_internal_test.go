package sched

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSpinOnlyBesideABusyWorker: a worker that found no work looks again
// s.spinLooks times only while another worker runs; beside idle workers it
// parks at once, so an idle runtime spends no CPU looking.
func TestSpinOnlyBesideABusyWorker(t *testing.T) {
	s, _, err := New(Config{Dispatcher: nopDispatcher{}, Workers: 2})
	require.NoError(t, err)
	w := s.workers[0]
	ticks := w.ticks
	s.nIdle.Store(1) // the other worker is parked
	require.Nil(t, w.spin())
	require.Equal(t, ticks, w.ticks, "no look beside an idle worker")
	s.nIdle.Store(0) // the other worker runs
	require.Nil(t, w.spin())
	require.Equal(t, ticks+uint32(s.spinLooks), w.ticks, "spinLooks looks beside a busy one")
	w.stop.Store(true)
	require.Nil(t, w.spin())
	require.Equal(t, ticks+uint32(s.spinLooks), w.ticks, "none once the worker must stop")

	one, _, err := New(Config{Dispatcher: nopDispatcher{}, Workers: 1})
	require.NoError(t, err)
	ticks = one.workers[0].ticks
	require.Nil(t, one.workers[0].spin())
	require.Equal(t, ticks, one.workers[0].ticks, "a single worker has no one to wait for")
}

// TestSpinLooksFollowTheCPUs: the long looks only where every worker has
// a CPU of its own.
func TestSpinLooksFollowTheCPUs(t *testing.T) {
	require.Equal(t, spinFinds, looksFor(runtime.NumCPU()))
	require.Equal(t, spinFindsShared, looksFor(runtime.NumCPU()+1))
	require.Greater(t, spinFinds, spinFindsShared)
}
