package bus_test

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

const src = `
.func main() -> i64
  .local z:i64
  const z, 1
  ret z
.end
.func spawner() -> ref
  .local t:ref, e:ref, s:ref
  .try b, en, h, e
b:
  spawn t, main
en:
  const s, "spawned"
  ret s
h:
  errkind s, e
  ret s
.end
.func canceller(victim:ref) -> ref
  .local e:ref, s:ref
  .try b, en, h, e
b:
  cancel victim
en:
  const s, "cancelled"
  ret s
h:
  errkind s, e
  ret s
.end
.func waiter(ev:ref) -> i64
  .local z:i64
  evwait ev
  const z, 0
  ret z
.end
`

// TestCapabilities shows each refusal: host spawn, spawn into another
// engine, cancel of another engine's task, config change, and from
// bytecode a spawn and a cancel — each refused with a clear error.
func TestCapabilities(t *testing.T) {
	b := testkit.Bus(t, bus.Config{}, nil)
	p := testkit.Prog(t, b, src)
	full, err := b.RegisterEngine("full", sched.EngineRuntimeConfig{}, bus.CapAll)
	require.NoError(t, err)
	none, err := b.RegisterEngine("none", sched.EngineRuntimeConfig{}, 0)
	require.NoError(t, err)
	spawnOnly, err := b.RegisterEngine("spawn-only", sched.EngineRuntimeConfig{}, bus.CapSpawn)
	require.NoError(t, err)

	// Host commands.
	_, err = none.Spawn(nil, p, "main")
	require.ErrorIs(t, err, bus.ErrDenied, "spawn without CapSpawn: %v", err)
	require.ErrorContains(t, err, "spawn", "spawn without CapSpawn: %v", err)
	_, err = spawnOnly.Spawn(full, p, "main")
	require.ErrorIs(t, err, bus.ErrDenied, "spawn into another engine without CapSpawnOther: %v", err)
	require.ErrorContains(t, err, "spawn-other", "spawn into another engine without CapSpawnOther: %v", err)
	if err := none.UpdateConfig(nil, sched.EngineRuntimeConfig{ReductionLimit: 10}); !errors.Is(err, bus.ErrDenied) {
		t.Fatalf("config without CapConfig: %v", err)
	}
	if err := full.UpdateConfig(none, sched.EngineRuntimeConfig{ReductionLimit: sched.MaxReductionLimit + 1}); !errors.Is(err, sched.ErrConfig) {
		t.Fatalf("reduction limit above the cap accepted: %v", err)
	}
	ev := full.NewEvent()
	victim, err := full.Spawn(nil, p, "waiter", ev)
	require.NoError(t, err)
	err = spawnOnly.Cancel(victim)
	require.ErrorIs(t, err, bus.ErrDenied, "cancel of another engine's task without CapCancelOther: %v", err)
	require.ErrorContains(t, err, "cancel-other", "cancel of another engine's task without CapCancelOther: %v", err)

	// From bytecode: the refusal is a catchable CapabilityError.
	sp, err := full.Spawn(none, p, "spawner")
	require.NoError(t, err)
	o := testkit.Await(t, sp)
	require.Equal(t, sched.Success, o.Kind, "spawn from bytecode without CapSpawn: %v", o)
	require.Equal(t, vmloop.ErrKindCapability, o.Value.String(), "spawn from bytecode without CapSpawn: %v", o)
	cn, err := spawnOnly.Spawn(nil, p, "canceller", vmloop.Ext(vmloop.KindTask, victim))
	require.NoError(t, err)
	o = testkit.Await(t, cn)
	require.Equal(t, sched.Success, o.Kind, "cancel from bytecode without CapCancelOther: %v", o)
	require.Equal(t, vmloop.ErrKindCapability, o.Value.String(), "cancel from bytecode without CapCancelOther: %v", o)
	require.NotEqual(t, sched.Completed, victim.State(), "refused cancel took effect")
	// Granted: the same commands go through.
	ok, _ := full.Spawn(nil, p, "spawner")
	o = testkit.Await(t, ok)
	require.Equal(t, "spawned", o.Value.String(), "granted spawn from bytecode: %v", o)
	require.NoError(t, full.Cancel(victim))
	o = testkit.Await(t, victim)
	require.Equal(t, sched.Cancelled, o.Kind, "victim: %v", o)
}

// TestHostIntrinsicCapability: a host intrinsic guarded by a capability is
// refused (catchable) in an engine without it and runs in one with it; a
// panicking host intrinsic traps only its task.
func TestHostIntrinsicCapability(t *testing.T) {
	b := testkit.Bus(t, bus.Config{}, nil)
	const secret = bus.CapUser0
	require.NoError(t, b.RegisterIntrinsic("host.double", []vmloop.Type{vmloop.TI64}, vmloop.TI64, secret,
		func(c *bus.Call) (vmloop.Value, error) { return vmloop.I64(2 * c.Args()[0].Int()), nil }))
	require.NoError(t, b.RegisterIntrinsic("host.panic", nil, vmloop.TVoid, 0,
		func(c *bus.Call) (vmloop.Value, error) { panic("host bug") }))
	if err := b.RegisterIntrinsic("io.print_i64", nil, vmloop.TVoid, 0, nil); err == nil {
		t.Fatal("a central intrinsic name was accepted for a host intrinsic")
	}
	p := testkit.Prog(t, b, `
.func main(x:i64) -> i64
  .local e:ref, r:i64
  .try b, en, h, e
b:
  intr r, host.double, x
en:
  ret r
h:
  const r, -1
  ret r
.end
.func boom() -> i64
  .local z:i64
  intr _, host.panic
  const z, 0
  ret z
.end`)
	with, _ := b.RegisterEngine("with", sched.EngineRuntimeConfig{}, bus.CapSpawn|bus.CapHost|secret)
	without, _ := b.RegisterEngine("without", sched.EngineRuntimeConfig{}, bus.CapSpawn|bus.CapHost)
	t1, _ := with.Spawn(nil, p, "main", vmloop.I64(21))
	o := testkit.Await(t, t1)
	require.Equal(t, int64(42), o.Value.Int(), "granted host intrinsic: %v", o)
	t2, _ := without.Spawn(nil, p, "main", vmloop.I64(21))
	o = testkit.Await(t, t2)
	require.Equal(t, int64(-1), o.Value.Int(), "refused host intrinsic: %v", o)
	t3, _ := with.Spawn(nil, p, "boom")
	o = testkit.Await(t, t3)
	require.Equal(t, sched.Trapped, o.Kind, "panicking host intrinsic: %v", o)
	require.Equal(t, vmloop.TrapHostPanic, o.Trap.Code, "panicking host intrinsic: %v", o)
	// The runtime survived the panic.
	t4, _ := with.Spawn(nil, p, "main", vmloop.I64(1))
	o = testkit.Await(t, t4)
	require.Equal(t, int64(2), o.Value.Int(), "after panic: %v", o)
}

// TestHostSuspend: a host intrinsic suspends its task and completes it
// later from another goroutine, without blocking the worker.
func TestHostSuspend(t *testing.T) {
	b := testkit.Bus(t, bus.Config{}, nil)
	pending := make(chan *bus.Completion, 1)
	b.RegisterIntrinsic("host.later", nil, vmloop.TI64, 0, func(c *bus.Call) (vmloop.Value, error) {
		pending <- c.Suspend()
		return vmloop.Void(), nil
	})
	p := testkit.Prog(t, b, `
.func main() -> i64
  .local r:i64
  intr r, host.later
  ret r
.end
.func other() -> i64
  .local z:i64
  const z, 5
  ret z
.end`)
	m, _ := b.RegisterEngine("m", sched.EngineRuntimeConfig{}, bus.CapAll)
	t1, _ := m.Spawn(nil, p, "main")
	c := <-pending
	// The worker is free: another task runs to completion meanwhile.
	t2, _ := m.Spawn(nil, p, "other")
	o := testkit.Await(t, t2)
	require.Equal(t, int64(5), o.Value.Int(), "%v", o)
	require.True(t, c.Complete(vmloop.I64(99)), "complete refused")
	if c.Complete(vmloop.I64(1)) {
		t.Fatal("second complete accepted")
	}
	o = testkit.Await(t, t1)
	require.Equal(t, int64(99), o.Value.Int(), "suspended host call: %v", o)
}

// TestOnlyBusMakesSchedulers fails if a package of this module other than
// bus (and the scheduler itself) calls sched.New: every runtime's
// scheduler is then behind a bus, which holds its sched.Control and never
// hands it out. That no exported path leads to the control is shown by the
// types (TestNoExportedPathToSchedulerControl in the root package); who
// calls a constructor is what the types cannot show.
func TestOnlyBusMakesSchedulers(t *testing.T) {
	root := filepath.Join("..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == ".git" || n == "testdata" || n == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		dir := filepath.ToSlash(filepath.Dir(rel))
		if dir == "bus" || dir == "sched" {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "sched" && sel.Sel.Name == "New" {
				t.Errorf("%s: calls sched.New: a scheduler is made by the RuntimeBus, which alone holds its control (S-16)", fset.Position(sel.Pos()))
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
}

// TestLiveTaskLimit: spawning beyond the engine's live-task limit throws a
// catchable ResourceError to the spawner; the running tasks are untouched.
func TestLiveTaskLimit(t *testing.T) {
	b := testkit.Bus(t, bus.Config{}, nil)
	m, err := b.RegisterEngine("small", sched.EngineRuntimeConfig{Limits: sched.ResourceLimits{LiveTasks: 4}}, bus.CapAll)
	require.NoError(t, err)
	p := testkit.Prog(t, b, `
.func main(ev:ref) -> ref
  .local t:ref, e:ref, s:ref, n:i64
  const n, 0
  .try b, en, h, e
b:
  spawn t, waiter, ev
  addi n, n, 1
  jmp b
en:
  const s, "unreachable"
  ret s
h:
  errkind s, e
  ret s
.end
.func waiter(ev:ref) -> i64
  .local z:i64
  evwait ev
  const z, 0
  ret z
.end`)
	ev := m.NewEvent()
	task, err := m.Spawn(nil, p, "main", ev)
	require.NoError(t, err)
	o := testkit.Await(t, task)
	require.Equal(t, sched.Success, o.Kind, "spawner: %v, want Success(ResourceError)", o)
	require.Equal(t, vmloop.ErrKindResource, o.Value.String(), "spawner: %v, want Success(ResourceError)", o)
	// main plus three waiters filled the engine; the waiters still run
	// (main's count is given back just after its outcome is published).
	waitLive(t, m, 3, "live tasks (the waiters)")
	// A broadcast keeps nothing: wait until every waiter waits.
	deadline := time.Now().Add(10 * time.Second)
	for b.Scheduler().WaitingTasks() != 3 {
		if time.Now().After(deadline) {
			t.Fatal("waiters did not wait")
		}
		time.Sleep(time.Millisecond)
	}
	m.Broadcast(ev)
	waitLive(t, m, 0, "live tasks after the broadcast (waiters did not finish)")
}

// TestSpawnStaleArgumentTraps: a spawn whose reference argument is a freed
// object traps the spawner (a handle fault, as any use of a stale handle)
// and creates no task; a spawn passing a string still works. It traps
// whatever the engine's limits: at its liveTasks limit too (the limit is
// looked at after the arguments are taken; otherwise the spawn would throw
// a ResourceError and hide the fault).
func TestSpawnStaleArgumentTraps(t *testing.T) {
	b := testkit.Bus(t, bus.Config{}, nil)
	for _, c := range []struct {
		engine string
		limits sched.ResourceLimits
		src    string
	}{{"stale", sched.ResourceLimits{}, `
.func main() -> i64
  .local s:ref, c:ref, v:i64
  const s, "four"
  spawn c, child, s
  joini v, c
  free  s
  spawn c, child, s
  ret   v
.end
.func child(s:ref) -> i64
  .local n:i64
  slen n, s
  ret  n
.end`}, {"lim", sched.ResourceLimits{LiveTasks: 1}, `
.func main() -> i64
  .local s:ref, c:ref, z:i64
  const s, "four"
  free  s
  spawn c, child, s
  const z, 0
  ret   z
.end
.func child(s:ref) -> i64
  .local z:i64
  const z, 0
  ret  z
.end`}} {
		p := testkit.Prog(t, b, c.src)
		m, err := b.RegisterEngine(c.engine, sched.EngineRuntimeConfig{Limits: c.limits}, bus.CapAll)
		require.NoError(t, err)
		task, err := m.Spawn(nil, p, "main")
		require.NoError(t, err)
		o := testkit.Await(t, task)
		require.Equal(t, sched.Trapped, o.Kind, "%s: spawner: %v, want a handle trap", c.engine, o)
		require.Equal(t, vmloop.TrapHandle, o.Trap.Code, "%s: spawner: %v, want a handle trap", c.engine, o)
		// No child was made; main's own count is given back just after
		// its outcome is published.
		waitLive(t, m, 0, c.engine+": live tasks after the trap")
	}
}

// waitLive waits until m's engine has want live tasks.
func waitLive(t *testing.T, m *bus.Member, want int64, what string) {
	t.Helper()
	testkit.WaitFor(t, func() bool { return m.Engine().LiveTasks() == want }, func() string {
		return fmt.Sprintf("%d %s, want %d", m.Engine().LiveTasks(), what, want)
	})
}

// TestSpawnPassesNullEventAndTaskHandles: a null reference, an event and a
// task handle passed at spawn reach the child (vmloop.Exec.ResetSpawn's
// shared-object path), and the task stays joinable after the parent freed
// its own handle.
func TestSpawnPassesNullEventAndTaskHandles(t *testing.T) {
	b := testkit.Bus(t, bus.Config{}, nil)
	p := testkit.Prog(t, b, `
.func main() -> i64
  .local s:ref, c:ref, e:ref, k:ref, v:i64, w:i64, a:ref
  const w, 1
  anew  a, w, ref
  const w, 0
  agetr s, a, w
  evnew e
  spawn k, leaf
  spawn c, child, s, e, k
  free  k
  joini v, c
  ret   v
.end
.func leaf() -> i64
  .local z:i64
  const z, 5
  ret  z
.end
.func child(s:ref, e:ref, k:ref) -> i64
  .local v:i64
  joini v, k
  ret  v
.end`)
	m, err := b.RegisterEngine("n", sched.EngineRuntimeConfig{}, bus.CapAll)
	require.NoError(t, err)
	for i := 0; i < 200; i++ {
		task, err := m.Spawn(nil, p, "main")
		require.NoError(t, err)
		o := testkit.Await(t, task)
		require.Equal(t, sched.Success, o.Kind, "%v", o)
		require.Equal(t, int64(5), o.Value.Int(), "%v", o)
	}
}
