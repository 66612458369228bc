package sched

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// timerSlack reads thread tid's timer slack in ns; ok is false once the
// thread has ended.
func timerSlack(t *testing.T, tid int) (ns int64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/timerslack_ns")
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false
	}
	require.NoError(t, err)
	ns, err = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	require.NoError(t, err)
	return ns, true
}

// TestWorkerRestoresTimerSlack: a worker runs with a 1 ns timer slack and
// gives its thread back to Go's pool with the slack it found, so a
// process the host later starts from that thread does not inherit it.
func TestWorkerRestoresTimerSlack(t *testing.T) {
	want, ok := timerSlack(t, os.Getpid())
	require.True(t, ok)
	require.NotEqual(t, int64(1), want, "the test process itself runs with a 1 ns slack")
	s, c, err := New(Config{Workers: 2, Dispatcher: nopDispatcher{}})
	require.NoError(t, err)
	require.NoError(t, c.Start())
	var tids []int
	require.Eventually(t, func() bool {
		tids = s.WorkerThreads()
		for _, id := range tids {
			if id == 0 {
				return false
			}
		}
		return true
	}, 10*time.Second, time.Millisecond)
	for _, id := range tids {
		ns, ok := timerSlack(t, id)
		require.True(t, ok)
		require.Equal(t, int64(1), ns, "worker thread %d", id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c.Shutdown(ctx)
	for _, id := range tids {
		if ns, ok := timerSlack(t, id); ok {
			require.Equal(t, want, ns, "thread %d, back in Go's pool", id)
		}
	}
}
