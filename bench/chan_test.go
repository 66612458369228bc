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
			require.Positive(t, ChanBufferedGo(1<<16))
		})
	}
}

// chanBench runs a channel body with b.N operations on a runtime of
// mnWorkers workers (jade) and at GOMAXPROCS mnWorkers (goroutine); for
// instruction counts, as docs/PERFORMANCE.md takes them, compare two
// -test.benchtime counts under callgrind.
func chanBench(b *testing.B, jade func(e *Env, n int) error, goroutine func(n int)) {
	b.Run("jade", func(b *testing.B) {
		e := envN(b, mnWorkers)
		b.ResetTimer()
		if err := jade(e, b.N); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("goroutine", func(b *testing.B) {
		WithProcs(mnWorkers, func() { goroutine(b.N) })
	})
}

func BenchmarkChanPingPong(b *testing.B) {
	chanBench(b, (*Env).ChanPingPongJade, ChanPingPongGo)
}

func BenchmarkChanStream(b *testing.B) {
	chanBench(b, (*Env).ChanStreamJade, ChanStreamGo)
}

// BenchmarkChanFanIn: b.N messages per producer.
func BenchmarkChanFanIn(b *testing.B) {
	chanBench(b, (*Env).ChanFanInJade, ChanFanInGo)
}

func BenchmarkSelect4(b *testing.B) {
	chanBench(b, func(e *Env, n int) error { _, err := e.Select4Jade(n); return err }, func(n int) { Select4Go(n) })
}
