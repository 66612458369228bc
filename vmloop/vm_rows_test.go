package vmloop_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/monoclock"
	"github.com/jadevm/jade/vmloop"
	"github.com/jadevm/jade/vmloop/jasm"
)

const loneRowsSrc = `.abi 1.8
.func now() -> i64
  .local t:i64
  intr    t, time.now
  ret     t
.end
.func closed(c:ref) -> i64
  .local r:i64
  intr    r, chan.closed, c
  ret     r
.end
.func timeout() -> i64
  .local n:i64
  const   n, 5
  intr    _, time.timeout, n
  ret     n
.end
`

// fakeChan is an ext object with a channel's Closed.
type fakeChan struct{ closed bool }

func (c *fakeChan) Closed() bool { return c.closed }

// TestLoneRowsRunInVM: time.now and chan.closed run in the VM loop (no
// request to the scheduler): time.now reads the master clock, chan.closed
// asks the channel, and an ext object that is not a channel traps.
func TestLoneRowsRunInVM(t *testing.T) {
	p, err := jasm.Assemble("lone.jasm", []byte(loneRowsSrc))
	require.NoError(t, err)
	require.NoError(t, vmloop.Verify(p, nil))
	run := func(fn string, args ...vmloop.Value) *vmloop.Exec {
		e, err := vmloop.NewExec(p, p.FuncIndex(fn), args, vmloop.DefaultLimits, 3)
		require.NoError(t, err)
		require.NotEqual(t, vmloop.SigIntrinsic, e.Run(1_000_000), "%s left the VM loop as a request", fn)
		return e
	}
	for _, name := range []string{"time.now", "chan.closed"} {
		in, ok := vmloop.LookupIntrinsic(name)
		require.True(t, ok)
		require.True(t, in.InVM(), name)
	}
	in, _ := vmloop.LookupIntrinsic("chan.len")
	require.False(t, in.InVM(), "chan.len is a request")

	t0 := monoclock.Now()
	got := run("now").Result().Int()
	require.True(t, t0 <= got && got <= monoclock.Now(), "time.now %d outside [%d, now]", got, t0)

	require.Equal(t, int64(0), run("closed", vmloop.Ext(vmloop.KindExt, &fakeChan{})).Result().Int())
	require.Equal(t, int64(1), run("closed", vmloop.Ext(vmloop.KindExt, &fakeChan{closed: true})).Result().Int())
	// time.timeout is answered in the loop only for a scheduler's task
	// (sched.TestTimeoutAnsweredInVM); an Exec of its own asks.
	e, err := vmloop.NewExec(p, p.FuncIndex("timeout"), nil, vmloop.DefaultLimits, 3)
	require.NoError(t, err)
	require.Equal(t, vmloop.SigIntrinsic, e.Run(1_000_000))
	require.Equal(t, "time.timeout", e.Request().Intr.Name)

	e = run("closed", vmloop.Ext(vmloop.KindExt, "not a channel"))
	require.Equal(t, vmloop.TrapHandle, e.Trap().Code)
	require.Contains(t, e.Trap().Msg, "chan.closed: the argument is not a channel")
}
