package bus_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

const foreignSrc = `
.func waiter(ev:ref) -> i64
  .local z:i64
  evwait ev
  const z, 7
  ret z
.end
.func nested(a:ref) -> i64
  .local z:i64
  const z, 0
  ret z
.end
.func handle() -> ref
  .local k:ref
  spawn k, leaf
  ret k
.end
.func leaf() -> i64
  .local z:i64
  const z, 5
  ret z
.end
.func event() -> ref
  .local e:ref
  evnew e
  ret e
.end
`

const foreignHostSrc = `
.func get() -> ref
  .local r:ref
  intr r, host.get
  ret r
.end
.func later() -> ref
  .local r:ref
  intr r, host.later
  ret r
.end
`

// TestForeignValuesRefused: a task, an event or an I/O handle of one
// runtime handed to another is refused at the host boundary with
// ErrForeign: as a spawn argument (at any depth of a ref array), to
// Signal, Broadcast and Cancel, in a host intrinsic's result and in a
// suspended call's completion; so is a spawn into, or a config change of,
// another bus's engine. Both runtimes still shut down clean.
func TestForeignValuesRefused(t *testing.T) {
	pending := make(chan *bus.Completion, 1)
	var give vmloop.Value
	b1 := testkit.Bus(t, bus.Config{Workers: 1}, nil)
	b2 := testkit.Bus(t, bus.Config{Workers: 1}, func(b *bus.Bus) {
		require.NoError(t, b.RegisterIntrinsic("host.get", nil, vmloop.TRef, 0, func(*bus.Call) (vmloop.Value, error) { return give, nil }))
		require.NoError(t, b.RegisterIntrinsic("host.later", nil, vmloop.TRef, 0, func(c *bus.Call) (vmloop.Value, error) {
			pending <- c.Suspend()
			return vmloop.Void(), nil
		}))
	})
	m1, err := b1.RegisterEngine("one", sched.EngineRuntimeConfig{}, bus.CapAll)
	require.NoError(t, err)
	m2, err := b2.RegisterEngine("two", sched.EngineRuntimeConfig{}, bus.CapAll)
	require.NoError(t, err)
	p1, p2 := testkit.Prog(t, b1, foreignSrc), testkit.Prog(t, b2, foreignSrc+foreignHostSrc)

	ev1 := m1.NewEvent()
	_, err = m2.Spawn(nil, p2, "waiter", ev1)
	require.ErrorIs(t, err, bus.ErrForeign)
	require.ErrorContains(t, err, "bus: spawn: argument 0 holds an event of another runtime")
	require.ErrorIs(t, m2.Signal(ev1), bus.ErrForeign)
	require.ErrorIs(t, m2.Broadcast(ev1), bus.ErrForeign)
	deep, err := vmloop.Array(vmloop.KindArrayRef, vmloop.Str("x"), ev1)
	require.NoError(t, err)
	deeper, err := vmloop.Array(vmloop.KindArrayRef, deep)
	require.NoError(t, err)
	_, err = m2.Spawn(nil, p2, "nested", deeper)
	require.ErrorIs(t, err, bus.ErrForeign)

	// An event made by a task, and a task handle, as a runtime's outcome.
	evTask := testkit.SpawnAwait(t, m1, p1, "event")
	require.Equal(t, sched.Success, evTask.Kind, "%v", evTask)
	_, err = m2.Spawn(nil, p2, "waiter", evTask.Value)
	require.ErrorIs(t, err, bus.ErrForeign)
	h := testkit.SpawnAwait(t, m1, p1, "handle")
	require.Equal(t, vmloop.KindTask, h.Value.Kind(), "%v", h)
	_, err = m2.Spawn(nil, p2, "nested", h.Value)
	require.ErrorIs(t, err, bus.ErrForeign)
	require.ErrorIs(t, m2.Cancel(h.Value.Obj().(*sched.Task)), bus.ErrForeign)
	// A Member of another bus names an engine of another scheduler.
	_, err = m2.Spawn(m1, p1, "leaf")
	require.ErrorIs(t, err, bus.ErrForeign)
	require.ErrorIs(t, m2.UpdateConfig(m1, sched.EngineRuntimeConfig{}), bus.ErrForeign)

	// A host intrinsic of runtime 2 returning runtime 1's event traps its
	// task; a suspended one completed with it too.
	give = ev1
	o := testkit.SpawnAwait(t, m2, p2, "get")
	require.Equal(t, sched.Trapped, o.Kind, "%v", o)
	require.Contains(t, o.Trap.Msg, "host.get: the result holds an event of another runtime")
	task := testkit.Spawn(t, m2, p2, "later")
	require.False(t, (<-pending).Complete(ev1))
	o = testkit.Await(t, task)
	require.Equal(t, sched.Trapped, o.Kind, "%v", o)
	require.Contains(t, o.Trap.Msg, "host.later: the result holds an event of another runtime")

	// Runtime 1's own tasks still take its event, and an unbound event
	// (sched.NewEvent) is taken by the first runtime it is handed to.
	w := testkit.Spawn(t, m1, p1, "waiter", ev1)
	require.NoError(t, m1.Signal(ev1))
	require.Equal(t, int64(7), testkit.Await(t, w).Value.Int())
	free := vmloop.Ext(vmloop.KindEvent, sched.NewEvent())
	w = testkit.Spawn(t, m2, p2, "waiter", free)
	require.NoError(t, m2.Signal(free))
	require.Equal(t, int64(7), testkit.Await(t, w).Value.Int())
	require.ErrorIs(t, m1.Signal(free), bus.ErrForeign)
}

// TestSpawnNilProgram: a nil program is an error, not a nil dereference.
func TestSpawnNilProgram(t *testing.T) {
	b := testkit.Bus(t, bus.Config{Workers: 1}, nil)
	m, err := b.RegisterEngine("m", sched.EngineRuntimeConfig{}, bus.CapAll)
	require.NoError(t, err)
	_, err = m.Spawn(nil, nil, "main")
	require.EqualError(t, err, "bus: spawn: nil program")
	_, err = m.SpawnNamed(nil, "n", nil, "main")
	require.Error(t, err)
	require.EqualError(t, m.Cancel(nil), "bus: cancel: nil task")
}

// TestRegisterIntrinsicResultType: a result type outside void, i64, f64
// and ref is refused at registration, not first at Load.
func TestRegisterIntrinsicResultType(t *testing.T) {
	b := testkit.Bus(t, bus.Config{Workers: 1}, nil)
	fn := func(*bus.Call) (vmloop.Value, error) { return vmloop.Void(), nil }
	err := b.RegisterIntrinsic("host.bad", nil, vmloop.Type(200), 0, fn)
	require.EqualError(t, err, `bus: register intrinsic "host.bad": result type type(200) is not void, i64, f64 or ref`)
	_, ok := b.ResolveIntrinsic("host.bad")
	require.False(t, ok, "a refused intrinsic is not registered")
	for _, r := range []vmloop.Type{vmloop.TVoid, vmloop.TI64, vmloop.TF64, vmloop.TRef} {
		require.NoError(t, b.RegisterIntrinsic("host.ok"+r.String(), nil, r, 0, fn))
	}
}
