package sched_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// parkedRefsProg: main spawns n children that wait on a channel nobody
// sends on, keeps their references (one register, an array, a message on
// a second channel to a holder that waits too) and waits itself.
const parkedRefsProg = `
.abi 1.6
.func sleeper(ch:ref) -> i64
  .local r:i64
  intr    r, chan.recv_i64, ch
  ret     r
.end
.func holder(q:ref, ch:ref) -> i64
  .local t:ref, r:i64
  intr    t, chan.recv_ref, q
  intr    r, chan.recv_i64, ch
  ret     r
.end
.func main(n:i64) -> i64
  .local ch:ref, q:ref, a:ref, h:ref, arr:ref, i:i64, one:i64, r:i64
  const   one, 1
  intr    ch, chan.new_i64, one
  intr    q, chan.new_ref, n
  anew    arr, n, ref
  const   i, 0
loop:
  jge     i, n, done
  spawn   a, sleeper, ch
  asetr   arr, i, a
  spawn   h, holder, q, ch
  intr    _, chan.send_ref, q, a
  addi    i, i, 1
  jmp     loop
done:
  intr    r, chan.recv_i64, ch
  ret     r
.end`

// TestTaskRefSlotsAfterShutdown: tasks cancelled by a forced shutdown
// while they hold task references (parked on channels) leave no slot of
// the table taken, on both loops and 1 and 4 workers.
func TestTaskRefSlotsAfterShutdown(t *testing.T) {
	for _, goLoop := range []bool{false, true} {
		for _, w := range []int{1, 4} {
			before := vmloop.TaskRefSlotsTaken()
			rt, err := jade.New(jade.Options{Workers: w, GoLoop: goLoop})
			require.NoError(t, err)
			p := testkit.Load(t, rt, parkedRefsProg)
			task, err := rt.Spawn(p, "main", vmloop.I64(300))
			require.NoError(t, err)
			testkit.WaitFor(t, func() bool { return rt.Main().LiveTasks() == 601 })
			time.Sleep(10 * time.Millisecond)
			require.NoError(t, rt.Shutdown(t.Context()))
			o, err := task.Wait(t.Context())
			require.NoError(t, err)
			require.Equal(t, sched.Cancelled, o.Kind, "%v", o)
			require.Equal(t, before, vmloop.TaskRefSlotsTaken(), fmt.Sprintf("go loop %v, %d workers", goLoop, w))
		}
	}
}
