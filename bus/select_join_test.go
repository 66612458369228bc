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

const selJoinProg = `
.abi 1.6
; child: receives v on go and returns it.
.func child(go:ref) -> i64
  .local v:i64
  intr  v, chan.recv_i64, go
  ret   v
.end

; parent: spawns child(go); waits on case 0 join(child), case 1 recv(ch)
; with deadline d, r times, counting 100 per channel case; returns the
; count + the child's result, joined once a join case fired.
.func parent(go:ref, ch:ref, d:i64, r:i64) -> i64
  .local t:ref, s:ref, k:i64, v:i64, sum:i64
  spawn t, child, go
  intr  s, sel.new
  intr  _, sel.join, s, t
  intr  _, sel.recv, s, ch
  const sum, 0
loop:
  jeqi  r, 0, out
  subi  r, r, 1
  intr  k, sel.wait, s, d
  jeqi  k, 0, joined
  jlti  k, 0, late
  intr  v, sel.value_i64, s
  addi  sum, sum, 100
  jmp   loop
late:
  addi  sum, sum, 10000
  jmp   loop
joined:
  joini v, t
  add   sum, sum, v
  ret   sum
out:
  ret   sum
.end

`

// TestSelectJoin: a join case fires once its task has ended, and the
// join after it returns at once; a receive case that wins first leaves it
// for a later wait; the deadline fires while the task runs; 500 waits
// the channel wins (each leaving a stale join entry on the task, which
// its joiner list compacts) do not disturb the join that ends them.
func TestSelectJoin(t *testing.T) {
	var m *bus.Member
	b := testkit.Bus(t, bus.Config{Workers: 2}, func(b *bus.Bus) {
		m = testkit.Engine(t, b, "j", sched.EngineRuntimeConfig{TimerWheel: testkit.Wheel()}, bus.CapAll)
	})
	p := testkit.Prog(t, b, selJoinProg)
	ctx := context.Background()
	mk := func() vmloop.Value {
		ch, err := m.NewChan(vmloop.KindI64, 0)
		require.NoError(t, err)
		return ch
	}
	// The channel wins three times, then the child ends: 300 + 7.
	gov, ch := mk(), mk()
	task := testkit.Spawn(t, m, p, "parent", gov, ch, vmloop.I64(-1), vmloop.I64(10))
	for range 3 {
		require.NoError(t, m.Send(ctx, ch, vmloop.I64(1)))
	}
	require.NoError(t, m.Send(ctx, gov, vmloop.I64(7)))
	o := testkit.Await(t, task)
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.Equal(t, int64(307), o.Value.Int())

	// The deadline three times while the child waits; then the child
	// is let go.
	gov, ch = mk(), mk()
	task = testkit.Spawn(t, m, p, "parent", gov, ch, ms(2), vmloop.I64(3))
	o = testkit.Await(t, task)
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.Equal(t, int64(30000), o.Value.Int())
	require.NoError(t, m.Send(ctx, gov, vmloop.I64(5)))

	// 500 channel wins: the join entries of the waits are compacted away.
	gov, ch = mk(), mk()
	task = testkit.Spawn(t, m, p, "parent", gov, ch, vmloop.I64(-1), vmloop.I64(501))
	for range 500 {
		require.NoError(t, m.Send(ctx, ch, vmloop.I64(1)))
	}
	require.NoError(t, m.Send(ctx, gov, vmloop.I64(9)))
	o = testkit.Await(t, task)
	require.Equal(t, int64(50009), o.Value.Int(), "%v", o)
}
