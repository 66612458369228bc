package bus_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
)

// closedProg: chan.closed before and after a child closes the channel,
// with a value still buffered (closed is not drained), and on the drain's
// channel before a drain.
const closedProg = `
.abi 1.8
.func closed() -> i64
  .local ch:ref, n:i64, t:ref, a:i64, b:i64, c:i64, d:ref, v:i64
  const n, 1
  intr  ch, chan.new_i64, n
  intr  _, chan.send_i64, ch, n
  intr  a, chan.closed, ch
  spawn t, closer, ch
  joinv t
  intr  b, chan.closed, ch
  intr  v, chan.recv_i64, ch
  intr  d, chan.drain
  intr  c, chan.closed, d
  muli  a, a, 100
  muli  b, b, 10
  add   a, a, b
  add   a, a, c
  ret   a
.end
.func closer(ch:ref) -> i64
  .local z:i64
  intr  _, chan.close, ch
  const z, 0
  ret   z
.end
; notchan: chan.closed on a select, an object of the scheduler that is
; not a channel.
.func notchan() -> i64
  .local s:ref, r:i64
  intr  s, sel.new
  intr  r, chan.closed, s
  ret   r
.end
`

// TestChanClosed: chan.closed sees a close made by another task at once
// (a buffered value left does not hide it), reads the drain's channel,
// and traps on an object that is not a channel.
func TestChanClosed(t *testing.T) {
	for _, workers := range []int{1, 2} {
		b, m := timeBus(t, workers, sched.ResourceLimits{})
		p := testkit.Prog(t, b, closedProg)
		o := testkit.SpawnAwait(t, m, p, "closed")
		require.Equal(t, sched.Success, o.Kind, "%v", o)
		require.Equal(t, int64(0*100+1*10+0), o.Value.Int())
		o = testkit.SpawnAwait(t, m, p, "notchan")
		require.Equal(t, sched.Trapped, o.Kind, "%v", o)
		require.Contains(t, o.Trap.Error(), "chan.closed: the argument is not a channel")
	}
}
