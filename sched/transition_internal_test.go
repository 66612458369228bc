package sched

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOwnEdges checks the edges that transition writes with a release
// store instead of a compare-and-swap: exactly Runnable → Running and
// Running → Runnable, both legal; and that such an edge from another
// state still panics, as the compare-and-swap's failure did.
func TestOwnEdges(t *testing.T) {
	var own [][2]State
	for from := Runnable; from <= Completed; from++ {
		for to := Runnable; to <= Completed; to++ {
			if ownEdge(from, to) {
				require.True(t, Legal(from, to), "%s → %s", from, to)
				own = append(own, [2]State{from, to})
			}
		}
	}
	require.Equal(t, [][2]State{{Runnable, Running}, {Running, Runnable}}, own)

	var task Task
	task.state.Store(uint32(Runnable))
	task.transition(Runnable, Running)
	require.Equal(t, Running, task.State())
	task.transition(Running, Runnable)
	require.Equal(t, Runnable, task.State())
	task.state.Store(uint32(Waiting))
	require.Panics(t, func() { task.transition(Runnable, Running) })
	require.Equal(t, Waiting, task.State(), "a refused edge leaves the state")
}
