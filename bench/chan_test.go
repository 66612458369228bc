package bench

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestChanBodies runs every channel body once with small counts at 1 and
// 2 workers: each checks what it received (the values, their sum, the
// case that fired).
func TestChanBodies(t *testing.T) {
	for _, w := range []int{1, 2} {
		e, err := NewEnv(w)
		require.NoError(t, err)
		require.NoError(t, e.ChanPingPongJade(1000))
		require.NoError(t, e.ChanStreamJade(5000))
		require.NoError(t, e.ChanFanInJade(50))
		d, err := e.Select4Jade(1000)
		require.NoError(t, err)
		require.Positive(t, d)
		per, err := e.ChanBufferedJade(1 << 16)
		require.NoError(t, err)
		require.Positive(t, per)
		e.Close()
		WithProcs(w, func() {
			ChanPingPongGo(1000)
			ChanStreamGo(5000)
			ChanFanInGo(50)
			require.Positive(t, Select4Go(1000))
			require.Positive(t, ChanBufferedGo(1 << 16))
		})
	}
}
