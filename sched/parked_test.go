package sched_test

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// parkedProg spawns n tasks that wait on gate, and returns: the shape of
// the parked_task_bytes scenario (perf/, bench's srcParked).
const parkedProg = `
.func main(n:i64, gate:ref) -> i64
  .local i:i64, t:ref
  const i, 0
loop:
  jge   i, n, done
  spawn t, sleeper, gate
  addi  i, i, 1
  jmp   loop
done:
  ret   i
.end
.func sleeper(gate:ref) -> i64
  .local z:i64
  evwait gate
  const z, 0
  ret z
.end`

// parkedBytesMax is what the parts of a parked task may add up to (see
// docs/PERFORMANCE.md, "Spawn and the task record"): lower it with the
// figure when a part shrinks.
const parkedBytesMax = 392

// TestParkedTaskParts measures the Go heap a parked task holds, part by
// part (its record, its Exec, registers, frames and handle table, each
// rounded to its size class, and its event reference's slot of the shared
// reference table; the rest is the event's share of its waiter list),
// against runtime.MemStats over 50,000 parked tasks: the parts
// account for what the heap grew by, and stay within parkedBytesMax.
func TestParkedTaskParts(t *testing.T) {
	const n = 50_000
	rt := testkit.ForcedRuntime(t, jade.Options{Workers: 1})
	p := testkit.Load(t, rt, parkedProg)
	gate := rt.NewEvent()
	s := hostbus.Scheduler(rt)
	heap0 := heapInUse()
	o := testkit.Run(t, rt, p, "main", vmloop.I64(n), gate)
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	testkit.WaitFor(t, func() bool { return s.WaitingTasks() == n })
	heap1 := heapInUse()
	parts := s.TaskParts()
	require.Equal(t, n, parts.Tasks)
	per := func(b int) float64 { return float64(b) / n }
	measured := float64(heap1-heap0) / n
	t.Logf("per parked task: heap %.1f B; record with its Exec %.0f (Task %d, of which Exec %d), registers %.0f, frames %.0f, handle table %.0f, reference slots %.0f: %.0f B; rest (the waiter list, the spawner's leftovers) %.1f B",
		measured, per(parts.Record), unsafe.Sizeof(sched.Task{}), unsafe.Sizeof(vmloop.Exec{}), per(parts.Regs), per(parts.Frames), per(parts.Handles),
		per(parts.Refs), per(parts.Sum()), measured-per(parts.Sum()))
	// The waiter list holds a 24-byte entry per task and grows by doubling
	// (up to 2× that); the rest is a few objects of the run's own.
	require.InDelta(t, per(parts.Sum())+24, measured, 28, "the parts do not account for the heap's growth")
	require.LessOrEqual(t, per(parts.Sum()), float64(parkedBytesMax))
	require.NoError(t, rt.Broadcast(gate))
	testkit.WaitFor(t, func() bool { return s.LiveTasks() == 0 })
}

// heapInUse is the Go heap's live bytes after two collections.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestHostRecordKeepsNoMemory: a task record the host holds after its end
// (pinned: never reused) keeps none of its Exec's register, frame or
// handle memory, and still names its program's functions.
func TestHostRecordKeepsNoMemory(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	p := testkit.Load(t, rt, `
.func main(d:i64) -> i64
  .local r:i64, d1:i64, s:ref
  .regs 40
  const   s, "held"
  jgti    d, 0, more
  const   r, 0
  ret     r
more:
  subi    d1, d, 1
  call    r, main, d1
  ret     r
.end`)
	task, err := rt.Spawn(p, "main", vmloop.I64(100))
	require.NoError(t, err)
	o, err := task.Wait(t.Context())
	require.NoError(t, err)
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.Zero(t, sched.ExecOf(hostbus.Task(task)).Footprint(), "an ended record the host holds keeps no stacks")
	require.Equal(t, "main", hostbus.Task(task).Program().FuncName(0))
}

// TestParkedAfterDeepTasks: a parked task holds the stacks it needs, not
// what its reused record kept of a deeper task before it (a record keeps
// up to 8 KiB of registers and 6 KiB of frames for the next spawn). 2,000
// tasks that nothing names recurse 20 calls deep (about 440 registers
// each) and end, then 2,000 small ones park on the records they left:
// each parked task's parts stay within parkedBytesMax plus a cache line
// for each stack.
func TestParkedAfterDeepTasks(t *testing.T) {
	const n = 2_000
	rt := testkit.ForcedRuntime(t, jade.Options{Workers: 1})
	p := testkit.Load(t, rt, parkedProg+`
.func deepMain(n:i64, gate:ref) -> i64
  .local i:i64, c:ref
  const i, 0
loop:
  jge   i, n, done
  spawn c, deep, gate
  free  c
  addi  i, i, 1
  jmp   loop
done:
  ret   i
.end
.func deep(gate:ref) -> i64
  .local r:i64, d:i64
  evwait  gate
  const   d, 20
  call    r, down, d
  ret     r
.end
.func down(d:i64) -> i64
  .local r:i64, d1:i64
  .regs 20
  jgti    d, 0, more
  const   r, 0
  ret     r
more:
  subi    d1, d, 1
  call    r, down, d1
  ret     r
.end`)
	s := hostbus.Scheduler(rt)
	deepGate := rt.NewEvent()
	o := testkit.Run(t, rt, p, "deepMain", vmloop.I64(n), deepGate)
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	testkit.WaitFor(t, func() bool { return s.WaitingTasks() == n })
	require.NoError(t, rt.Broadcast(deepGate)) // all end now: their records are free together
	testkit.WaitFor(t, func() bool { return s.LiveTasks() == 0 })

	gate := rt.NewEvent()
	o = testkit.Run(t, rt, p, "main", vmloop.I64(n), gate)
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	testkit.WaitFor(t, func() bool { return s.WaitingTasks() == n })
	parts := s.TaskParts()
	require.Equal(t, n, parts.Tasks)
	per := float64(parts.Sum()) / n
	t.Logf("per parked task after deep ones: %.0f B (registers %.0f, frames %.0f, handle table %.0f)",
		per, float64(parts.Regs)/n, float64(parts.Frames)/n, float64(parts.Handles)/n)
	require.LessOrEqual(t, per, float64(parkedBytesMax+2*64))
	require.NoError(t, rt.Broadcast(gate))
	testkit.WaitFor(t, func() bool { return s.LiveTasks() == 0 })
}
