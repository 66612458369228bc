package bus_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// TestChanSteadyStateAllocs: a message sent and received — buffered, or
// handed to a parked receiver, or taken from a parked sender — allocates
// nothing once the message records and waiters are warm (benchProg's
// stream and ping-pong at 1 and 2 workers). Setup (the channels, the
// consumer task) and a collection emptying the pools cost a few
// allocations per run, far below one per message.
func TestChanSteadyStateAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops records at random")
	}
	const n = 50_000
	for _, w := range []int{1, 2} {
		for _, fn := range []string{"stream", "pingpong"} {
			t.Run(fmt.Sprintf("%s/workers=%d", fn, w), func(t *testing.T) {
				b, m := timeBus(t, w, sched.ResourceLimits{})
				p := testkit.Prog(t, b, benchProg)
				args := func(k int) []vmloop.Value {
					if fn == "stream" {
						return []vmloop.Value{vmloop.I64(int64(k)), vmloop.I64(1024)}
					}
					return []vmloop.Value{vmloop.I64(int64(k))}
				}
				o := testkit.SpawnAwait(t, m, p, fn, args(2000)...) // warm-up
				require.Equal(t, sched.Success, o.Kind, "%v", o)
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				o = testkit.SpawnAwait(t, m, p, fn, args(n)...)
				runtime.ReadMemStats(&m1)
				require.Equal(t, sched.Success, o.Kind, "%v", o)
				per := float64(m1.Mallocs-m0.Mallocs) / n
				require.Less(t, per, 0.05, "%d allocations for %d %s", m1.Mallocs-m0.Mallocs, n, map[string]string{"stream": "messages", "pingpong": "round trips"}[fn])
			})
		}
	}
}
