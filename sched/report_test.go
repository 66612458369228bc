package sched_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// TestSummarizeReportsIsBounded: 200,000 reports summarise into one short
// line with the counts by engine and state, the first tasks by id and the
// number left out; completed tasks are neither counted nor listed.
func TestSummarizeReportsIsBounded(t *testing.T) {
	var rs []sched.TaskReport
	for i := range 200_000 {
		st, eng := sched.Runnable, "main"
		switch i % 4 {
		case 1:
			st = sched.Waiting
		case 2:
			st, eng = sched.Running, "io"
		case 3:
			st = sched.Completed
		}
		rs = append(rs, sched.TaskReport{ID: uint64(i + 1), Engine: eng, State: st, Func: "f", PC: 3})
	}
	s := sched.SummarizeReports(rs, sched.MaxListedReports)
	require.Less(t, len(s), 1000, s)
	require.True(t, strings.HasPrefix(s, "150000 tasks (engine io: 50000 Running; engine main: 50000 Runnable, 50000 Waiting): task 1 (engine main) Runnable at f@3; task 2 (engine main) Waiting at f@3; task 3 (engine io) Running at f@3; task 5 "), s)
	require.True(t, strings.HasSuffix(s, "; and 149990 more"), s)
	require.NotContains(t, s, "Completed")
	require.Equal(t, "1 task (engine main: 1 Waiting): task 2 (engine main) Waiting at f@3", sched.SummarizeReports(rs[:3:3][1:2], 10))
	require.Equal(t, "0 tasks", sched.SummarizeReports(rs[3:4], 10))
}

// TestForcedShutdownSummarizesMany: 2,000 tasks left behind a host
// intrinsic that blocks the only worker are summarised by engine and state
// with at most sched.MaxListedReports listed; every one of them was listed
// before, so a shutdown with millions printed a line of hundreds of MB.
func TestForcedShutdownSummarizesMany(t *testing.T) {
	rt, err := jade.New(jade.Options{Workers: 1})
	require.NoError(t, err)
	release := make(chan struct{})
	var entered atomic.Bool
	require.NoError(t, rt.RegisterIntrinsic("test.block", nil, vmloop.TVoid, 0, func(c *bus.Call) (vmloop.Value, error) {
		entered.Store(true)
		<-release
		return vmloop.Void(), nil
	}))
	p := testkit.Load(t, rt, `
.func main() -> i64
  .local z:i64
  intr _, test.block
  const z, 0
  ret z
.end
.func idle() -> i64
  .local z:i64
  const z, 0
  ret z
.end`)
	first, err := rt.Spawn(p, "main")
	require.NoError(t, err)
	testkit.WaitFor(t, entered.Load)
	for range 2000 {
		_, err := rt.Spawn(p, "idle")
		require.NoError(t, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err = rt.Shutdown(ctx)
	require.Error(t, err)
	msg := err.Error()
	require.Less(t, len(msg), 1500, msg)
	require.Contains(t, msg, "jade: shutdown: abandoned at the deadline: 2001 tasks (engine main: 2000 Runnable, 1 Running): ")
	require.Contains(t, msg, "at TestForcedShutdownSummarizesMany.jasm:4 (main)")
	require.True(t, strings.HasSuffix(msg, "; and 1991 more"), msg)
	close(release)
	o, _ := first.Wait(context.Background())
	require.Equal(t, sched.Cancelled, o.Kind)
}
