package sched

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTimeoutWonBeforePark: a peer fires a task's timeout (stall.go)
// while the task has armed its wait and not parked: the peer writes only
// the wait word (phTimedOut), and the task's own worker, seeing the wait
// ended, notes the timeout itself. Nothing but the wait word orders the
// two here, so a write to the record by the peer would be a data race
// (go test -race) and could be missed.
func TestTimeoutWonBeforePark(t *testing.T) {
	s := &Scheduler{}
	c := &Control{s: s}
	for range 200 {
		tk := newRecord()
		tk.tm = &taskTimer{}
		tok := tk.arm()
		go s.fireTimer(&worker{s: s}, timerRec{t: tk, gen: tok.gen, kind: timerTimeout})
		for tk.wokenBy() == phArmed {
			runtime.Gosched()
		}
		require.Equal(t, uint64(phTimedOut), tk.wokenBy())
		tk.noteTimeout(tk.disarm())
		require.True(t, c.TimedOut(tk), "the timeout is reported")
		require.False(t, c.TimedOut(tk), "once")
	}
}
