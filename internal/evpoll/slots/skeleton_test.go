package slots

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/evpoll"
)

type doneEntry struct {
	tok     evpoll.Token
	cleared bool
}

func (e *doneEntry) Completion() evpoll.Completion { return evpoll.Completion{Token: e.tok} }
func (e *doneEntry) Clear()                        { e.cleared = true }

// TestDeliver: completions leave in ready order, as many as out holds, and
// their entries are cleared and released.
func TestDeliver(t *testing.T) {
	tab := New[doneEntry](8)
	var ready []int32
	for tok := range evpoll.Token(3) {
		idx, e, ok := tab.Alloc()
		require.True(t, ok)
		e.tok = tok + 10
		ready = append(ready, idx)
	}
	out := make([]evpoll.Completion, 2)
	require.Equal(t, 2, Deliver(tab, &ready, out))
	require.Equal(t, []evpoll.Token{10, 11}, []evpoll.Token{out[0].Token, out[1].Token})
	require.Len(t, ready, 1)
	require.Equal(t, 1, tab.Active())
	require.Equal(t, 1, Deliver(tab, &ready, out))
	require.Equal(t, evpoll.Token(12), out[0].Token)
	require.Zero(t, Deliver(tab, &ready, out))
}

func TestDeadline(t *testing.T) {
	require.Equal(t, time.Duration(-1), NewDeadline(-1).Left())
	require.Zero(t, NewDeadline(0).Left())
	d := NewDeadline(time.Hour)
	require.Greater(t, d.Left(), 59*time.Minute)
	d = NewDeadline(time.Nanosecond)
	time.Sleep(time.Millisecond)
	require.Zero(t, d.Left())
	require.ErrorIs(t, CheckWait("x", nil), evpoll.ErrInvalidOp)
}

type kicks int

func (k *kicks) Kick() { *k++ }

// TestWakeGate: Wakes coalesce until one is taken, and fail after Refuse.
func TestWakeGate(t *testing.T) {
	var g WakeGate
	var k kicks
	var ctr evpoll.Counters
	require.NoError(t, Wake(&g, &k, "x", &ctr))
	require.NoError(t, Wake(&g, &k, "x", &ctr))
	require.Equal(t, kicks(1), k, "the second Wake is coalesced")
	require.True(t, g.Take())
	require.False(t, g.Take())
	g.Refuse()
	err := Wake(&g, &k, "x", &ctr)
	require.True(t, errors.Is(err, evpoll.ErrClosed), "%v", err)
	require.Equal(t, uint64(1), ctr.Wakes.Load())
}
