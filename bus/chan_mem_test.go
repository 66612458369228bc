package bus_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// TestChanMemoryBudget: buffered messages count in the sender's engine's
// memory budget; a send that does not fit throws ResourceError to the
// sender, and receiving gives every byte back.
func TestChanMemoryBudget(t *testing.T) {
	const limit = 8 << 20
	b, m := timeBus(t, 1, sched.ResourceLimits{MemoryBytes: limit})
	p := testkit.Prog(t, b, `
.abi 1.5
; fill sends 64 KiB buffers on an unbounded-enough channel until the
; budget refuses one; returns how many were sent.
.func fill(ch:ref) -> i64
  .local n:i64, buf:ref, i:i64, e:ref, k:ref
  const n, 65536
  const i, 0
  .try  b, x, h, e
b:
  bnew  buf, n
  intr  _, chan.send_ref, ch, buf
  free  buf
  addi  i, i, 1
x:
  jmp   b
h:
  errkind k, e
  const buf, "ResourceError"
  seq   n, k, buf
  jnz   n, ok
  const i, -1
ok:
  ret   i
.end
`)
	ch, err := m.NewChan(vmloop.KindBytes, 1<<20)
	require.NoError(t, err)
	before := m.Engine().MemoryBytes()
	o := testkit.SpawnAwait(t, m, p, "fill", ch)
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	n := o.Value.Int()
	require.Greater(t, n, int64(10))
	require.Less(t, n, int64(limit/65536))
	held, _ := bus.ChanHeldBytes(ch)
	require.Greater(t, held, n*65536)
	// The host drains it: every byte comes back.
	for i := int64(0); i < n; i++ {
		v, err := m.Recv(context.Background(), ch)
		require.NoError(t, err)
		require.Equal(t, 65536, v.Len())
	}
	held, _ = bus.ChanHeldBytes(ch)
	require.Zero(t, held)
	testkit.WaitFor(t, func() bool { return m.Engine().MemoryBytes() <= before }, "memory back to %d, have %d", before, m.Engine().MemoryBytes())
}

// TestChanTimedOutSendGivesBytesBack: a send that times out on a full
// channel leaves nothing behind: the channel holds the bytes of its
// buffered message only, at once.
func TestChanTimedOutSendGivesBytesBack(t *testing.T) {
	b, m := timeBus(t, 1, sched.ResourceLimits{})
	p := testkit.Prog(t, b, `
.abi 1.5
.func late(ch:ref) -> ref
  .local s:ref, d:i64, e:ref
  const d, 1000000
  const s, "a message that will not be sent"
  intr  _, time.timeout, d
  .try  b, x, h, e
b:
  intr  _, chan.send_ref, ch, s
x:
  ret   s
h:
  errkind s, e
  ret   s
.end
`)
	ch, err := m.NewChan(vmloop.KindString, 1)
	require.NoError(t, err)
	require.NoError(t, m.Send(context.Background(), ch, vmloop.Str("first")))
	before, _ := bus.ChanHeldBytes(ch)
	o := testkit.SpawnAwait(t, m, p, "late", ch)
	require.Equal(t, "TimeoutError", o.Value.String(), "%v", o)
	after, _ := bus.ChanHeldBytes(ch)
	require.Equal(t, before, after)
	v, err := m.Recv(context.Background(), ch)
	require.NoError(t, err)
	require.Equal(t, "first", v.String())
}
