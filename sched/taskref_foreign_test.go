package sched_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

const foreignRefProg = `
.abi 1.6
.func handle() -> ref
  .local k:ref, big:i64
  const   big, 1000000000
  spawn   k, spin, big
  ret     k
.end
.func spin(n:i64) -> i64
  .local i:i64
  const   i, 0
loop:
  jge     i, n, done
  addi    i, i, 1
  jmp     loop
done:
  ret     i
.end
.func recvcancel(ch:ref) -> i64
  .local t:ref, r:i64
  intr    t, chan.recv_ref, ch
  cancel  t
  const   r, 7
  ret     r
.end
.func arg(t:ref) -> i64
  .local r:i64
  cancel  t
  const   r, 7
  ret     r
.end`

// TestTaskRefForeignRuntime: a task of runtime A (a task's result handed
// to the host) given by the host to runtime B, as a spawn argument or in
// a channel message, never reaches A's task from B's tasks; nor does a
// channel of A's given to B's task, on which A's tasks could send theirs.
func TestTaskRefForeignRuntime(t *testing.T) {
	for _, goLoop := range []bool{false, true} {
		a := testkit.Runtime(t, jade.Options{Workers: 2, GoLoop: goLoop})
		b := testkit.Runtime(t, jade.Options{Workers: 2, GoLoop: goLoop})
		pa, pb := testkit.Load(t, a, foreignRefProg), testkit.Load(t, b, foreignRefProg)
		o := testkit.Run(t, a, pa, "handle")
		require.Equal(t, sched.Success, o.Kind, "%v", o)
		require.Equal(t, vmloop.KindTask, o.Value.Kind())
		victim := o.Value.Obj().(*sched.Task)

		_, err := b.Spawn(pb, "arg", o.Value)
		require.ErrorIs(t, err, jade.ErrForeign)

		ch, err := b.NewChan(jade.ChanRef, 1)
		require.NoError(t, err)
		task, err := b.Spawn(pb, "recvcancel", ch)
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), testkit.Patience)
		err = b.Send(ctx, ch, o.Value)
		cancel()
		require.ErrorIs(t, err, jade.ErrForeign)
		require.ErrorContains(t, err, "the message holds a task of another runtime")
		require.NoError(t, b.CloseChan(ch))
		ob, err := task.Wait(context.Background())
		require.NoError(t, err)
		require.NotEqual(t, sched.Success, ob.Kind, "%v", ob)
		// A's channel handed to B's task would carry A's tasks to it.
		qa, err := a.NewChan(jade.ChanRef, 1)
		require.NoError(t, err)
		_, err = b.Spawn(pb, "recvcancel", qa)
		require.ErrorIs(t, err, jade.ErrForeign)
		require.ErrorContains(t, err, "holds a channel of another runtime")
		arr, err := vmloop.Array(vmloop.KindArrayRef, qa)
		require.NoError(t, err)
		_, err = b.Spawn(pb, "arg", arr)
		require.ErrorIs(t, err, jade.ErrForeign)
		require.False(t, victim.CancelRequested(), "A's task was cancelled from runtime B")
		require.NoError(t, hostbus.Member(a).Cancel(victim))
	}
}
