package jade_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

const waiterSrc = `
.func waiter(ev:ref) -> i64
  .local z:i64
  evwait ev
  const z, 1
  ret z
.end
`

// TestEventsStayInTheirRuntime: an event of runtime 1 handed to runtime
// 2 (to spawn its tasks on, or to Signal there) is refused with
// bus.ErrForeign, so runtime 1 never wakes runtime 2's tasks; the shape
// that let it (64 waiters of runtime 2, signalled by runtime 1) ends with
// both runtimes' Close clean (testkit.Runtime's cleanup).
func TestEventsStayInTheirRuntime(t *testing.T) {
	rt1 := testkit.Runtime(t, jade.Options{Workers: 1})
	rt2 := testkit.Runtime(t, jade.Options{Workers: 1})
	p2, err := rt2.Load("waiter.jasm", []byte(waiterSrc))
	require.NoError(t, err)
	ev := rt1.NewEvent()
	for i := 0; i < 64; i++ {
		_, err := rt2.Spawn(p2, "waiter", ev)
		require.ErrorIs(t, err, bus.ErrForeign)
		require.NoError(t, rt1.Signal(ev))
	}
	require.ErrorIs(t, rt2.Signal(ev), bus.ErrForeign)
	require.ErrorIs(t, rt2.Broadcast(ev), bus.ErrForeign)
	// Runtime 2's own event works as before.
	own := rt2.NewEvent()
	task, err := rt2.Spawn(p2, "waiter", own)
	require.NoError(t, err)
	require.NoError(t, rt2.Signal(own))
	o, err := task.Wait(context.Background())
	require.NoError(t, err)
	require.Equal(t, sched.Success, o.Kind, "%v", o)
}

// TestEmbeddingRefusesBadInput: Spawn of a nil program is an error as
// Verify(nil) is, and a host intrinsic's result type outside void, i64,
// f64 and ref is refused at registration.
func TestEmbeddingRefusesBadInput(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	require.Error(t, rt.Verify(nil))
	_, err := rt.Spawn(nil, "main")
	require.EqualError(t, err, "jade: spawn: nil program")
	_, err = rt.SpawnWith(jade.SpawnOptions{Name: "n"}, nil, "main")
	require.Error(t, err)
	_, err = rt.Run(context.Background(), nil, "main")
	require.Error(t, err)
	fn := func(*bus.Call) (vmloop.Value, error) { return vmloop.Void(), nil }
	require.ErrorContains(t, rt.RegisterIntrinsic("host.bad", nil, vmloop.Type(200), 0, fn), "result type type(200) is not void, i64, f64 or ref")
	require.ErrorContains(t, rt.RegisterBlockingIntrinsic("host.bad", nil, vmloop.Type(200), 0,
		func(context.Context, []vmloop.Value) (vmloop.Value, error) { return vmloop.Void(), nil }), "result type type(200)")
}
