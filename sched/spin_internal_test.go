package sched

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSpinOnlyBesideABusyWorker: a worker that found no work looks again
// spinFinds times only while another worker runs; beside idle workers it
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
	require.Equal(t, ticks+spinFinds, w.ticks, "spinFinds looks beside a busy one")
	w.stop.Store(true)
	require.Nil(t, w.spin())
	require.Equal(t, ticks+spinFinds, w.ticks, "none once the worker must stop")

	one, _, err := New(Config{Dispatcher: nopDispatcher{}, Workers: 1})
	require.NoError(t, err)
	ticks = one.workers[0].ticks
	require.Nil(t, one.workers[0].spin())
	require.Equal(t, ticks, one.workers[0].ticks, "a single worker has no one to wait for")
}
