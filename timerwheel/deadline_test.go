package timerwheel

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDeadline: a pending timer tells its deadline, after a Reset too; a
// cancelled one and the zero handle do not.
func TestDeadline(t *testing.T) {
	w := newWheel(t, DefaultConfig(), 0)
	h := w.Insert(5*ms, 1)
	d, ok := w.Deadline(h)
	require.True(t, ok)
	require.Equal(t, 5*ms, d)
	require.True(t, w.Reset(h, 9*ms))
	d, ok = w.Deadline(h)
	require.True(t, ok)
	require.Equal(t, 9*ms, d)
	require.True(t, w.Cancel(h))
	_, ok = w.Deadline(h)
	require.False(t, ok)
	_, ok = w.Deadline(0)
	require.False(t, ok)
}
