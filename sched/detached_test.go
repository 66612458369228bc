package sched_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// detachedOnceProg: main spawns n detached children (spawn _: no handle),
// each of which sends its index on a channel of 1,024 (so most of them
// park as senders first), then receives n indices and marks each in an
// array: a second arrival of one index returns -1, so n means every child
// ran and delivered exactly once.
const detachedOnceProg = `
.abi 1.9
.func main(n:i64) -> i64
  .local ch:ref, seen:ref, i:i64, v:i64, s:i64, cap:i64, one:i64
  const cap, 1024
  intr  ch, chan.new_i64, cap
  const i, 0
sp:
  jge   i, n, rc
  spawn _, child, ch, i
  addi  i, i, 1
  jmp   sp
rc:
  anew  seen, n, i64
  const i, 0
  const one, 1
l:
  jge   i, n, done
  intr  v, chan.recv_i64, ch
  ageti s, seen, v
  jnz   s, dup
  aseti seen, v, one
  addi  i, i, 1
  jmp   l
done:
  ret   i
dup:
  const i, -1
  ret   i
.end
.func child(ch:ref, i:i64) -> void
  intr  _, chan.send_i64, ch, i
  retv
.end`

// TestExactlyOnceDetached: tasks spawned detached, with no handle to keep
// their records, each run exactly once, at every worker count; once they
// have ended the registry is empty and the engine's memory budget is
// back at zero (no handle's bytes were taken, none are left over).
// make hammer runs it with 1M tasks (JADE_HAMMER).
func TestExactlyOnceDetached(t *testing.T) {
	testkit.Workers(t, []int{1, 2, 4, 8}, func(t *testing.T, workers int) {
		rt := testkit.Runtime(t, jade.Options{Workers: workers})
		p := testkit.Load(t, rt, detachedOnceProg)
		n := int64(100_000)
		if testing.Short() || raceEnabled {
			n = 10_000
		}
		if h, err := strconv.ParseInt(os.Getenv("JADE_HAMMER"), 10, 64); err == nil && h > 0 {
			n = h
		}
		o := testkit.Run(t, rt, p, "main", vmloop.I64(n))
		require.Equal(t, sched.Success, o.Kind, "workers=%d: %v", workers, o)
		require.Equal(t, n, o.Value.Int(), "workers=%d: an index arrived twice (-1) or the count is off", workers)
		e := hostbus.Member(rt).Engine()
		testkit.WaitFor(t, func() bool {
			return hostbus.Scheduler(rt).LiveTasks() == 0 && e.LiveTasks() == 0 && e.MemoryBytes() == 0
		})
	})
}

// TestDetachedSpawnReusesRecords: a chain of detached spawns reuses its
// task records as soon as each link ends (no handle holds them), and the
// links' handles cost the spawners nothing: no register is written.
func TestDetachedSpawnReusesRecords(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under -race")
	}
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	p := testkit.Load(t, rt, `
.func main(n:i64, ev:ref) -> i64
  spawn  _, link, n, ev
  evwait ev
  ret    n
.end
.func link(n:i64, ev:ref) -> i64
  .local m:i64
  jgti     n, 0, more
  evsignal ev
  ret      n
more:
  subi     m, n, 1
  spawn    _, link, m, ev
  ret      n      ; n is unchanged: the detached spawn wrote nothing
.end`)
	testkit.Run(t, rt, p, "main", vmloop.I64(100), rt.NewEvent()) // warm the pools
	const links = 20000
	made := sched.TaskRecordsMade()
	o := testkit.Run(t, rt, p, "main", vmloop.I64(links), rt.NewEvent())
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.Equal(t, int64(links), o.Value.Int())
	if n := sched.TaskRecordsMade() - made; n > links/10 {
		t.Fatalf("%d task records allocated for %d detached links (records are not reused)", n, links)
	}
}

// TestDetachedTasksAreSeen: detached tasks parked on an event after their
// spawner has ended are still live tasks: the task report lists them,
// and a forced shutdown's cancel-all ends them (ForcedRuntime's cleanup
// fails the test if one had to be abandoned).
func TestDetachedTasksAreSeen(t *testing.T) {
	rt := testkit.ForcedRuntime(t, jade.Options{Workers: 2})
	p := testkit.Load(t, rt, `
.func main(n:i64, gate:ref) -> i64
  .local i:i64
  const i, 0
l:
  jge   i, n, d
  spawn _, sleeper, gate
  addi  i, i, 1
  jmp   l
d:
  ret   i
.end
.func sleeper(gate:ref) -> i64
  .local z:i64
  evwait gate
  const z, 1
  ret   z
.end`)
	const n = 100
	gate := rt.NewEvent()
	o := testkit.Run(t, rt, p, "main", vmloop.I64(n), gate)
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	s := hostbus.Scheduler(rt)
	testkit.WaitFor(t, func() bool { return s.WaitingTasks() == n })
	require.Equal(t, int64(n), s.LiveTasks())
	waiting := 0
	for _, r := range s.Tasks() {
		if r.Func == "sleeper" && r.State == sched.Waiting {
			waiting++
		}
	}
	require.Equal(t, n, waiting, "the task report lists every detached sleeper")
	ctx, cancel := context.WithTimeout(context.Background(), testkit.CloseTimeout)
	defer cancel()
	require.NoError(t, rt.Shutdown(ctx))
	require.Zero(t, s.LiveTasks())
}
