package examples_test

import (
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/testkit"
)

// TestEchoRoundTripWakes runs echo.jasm with one Go client doing round
// trips one after another and logs, per round trip, the backends' Wake
// calls that signalled, the Waits they ended, the system calls and the
// workers' parks (JADE_ECHO_ROUNDS round trips, default 2,000). One
// connection has one runnable task at a time, so the worker that reaps a
// completion runs its task and wakes nobody, whatever the worker count
// (the failure it guards against: a worker reaping completions in its park was still on
// the idle list and woke itself, a Wake system call per completion).
func TestEchoRoundTripWakes(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the figures are for the Linux backends")
	}
	rounds := 2000
	if v := os.Getenv("JADE_ECHO_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "JADE_ECHO_ROUNDS")
		rounds = n
	}
	testkit.Pollers(t, func(t *testing.T) {
		testkit.Workers(t, []int{1, 2, 4, 8}, func(t *testing.T, workers int) {
			s := startServer(t, "echo.jasm", workers)
			c, err := net.Dial("tcp", s.addr)
			require.NoError(t, err)
			msg, buf := make([]byte, 64), make([]byte, 64)
			roundTrip := func() {
				_, err := c.Write(msg)
				require.NoError(t, err)
				_, err = io.ReadFull(c, buf)
				require.NoError(t, err)
			}
			for range 100 { // the connection task is running and warm
				roundTrip()
			}
			sc := hostbus.Scheduler(s.rt)
			st0, parks0 := sc.IOStats(), sc.Parks()
			for range rounds {
				roundTrip()
			}
			st, parks := sc.IOStats(), sc.Parks()
			require.NoError(t, c.Close())
			s.stop(t)
			per := func(a, b uint64) float64 { return float64(a-b) / float64(rounds) }
			wakes := per(st.Wakes, st0.Wakes)
			t.Logf("%d workers: per round trip %.3f wakes, %.3f wake-ups, %.2f parks, %.2f syscalls (%d round trips)",
				workers, wakes, per(st.WakeUps, st0.WakeUps), per(parks, parks0), per(st.Syscalls, st0.Syscalls), rounds)
			require.LessOrEqual(t, wakes, 0.05, "%d workers: a lone connection's completions woke workers", workers)
		})
	})
}
