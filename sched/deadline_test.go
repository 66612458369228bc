package sched_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/sched"
)

// TestDeadlineAfter: now + d saturates to MaxDeadline instead of wrapping
// into the past.
func TestDeadlineAfter(t *testing.T) {
	require.Equal(t, int64(150), sched.DeadlineAfter(100, 50))
	require.Equal(t, int64(50), sched.DeadlineAfter(100, -50))
	require.Equal(t, sched.MaxDeadline, sched.DeadlineAfter(100, math.MaxInt64))
	require.Equal(t, sched.MaxDeadline, sched.DeadlineAfter(1, sched.MaxDeadline))
	require.Equal(t, sched.MaxDeadline, sched.DeadlineAfter(0, sched.MaxDeadline))
	require.Equal(t, sched.MaxDeadline-1, sched.DeadlineAfter(0, sched.MaxDeadline-1))
}
