package sched_test

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// TestSpawnReusesTaskRecords: a chain of tasks spawned from bytecode
// allocates (almost) no task records: each completed link's record is
// reused once its parent's handle is gone.
func TestSpawnReusesTaskRecords(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under -race")
	}
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	p := testkit.Load(t, rt, `
.func main(n:i64) -> i64
  .local t:ref, v:i64
  jeqi  n, 0, d
  subi  n, n, 1
  spawn t, main, n
  ret   n
d:
  ret   n
.end`)
	testkit.Run(t, rt, p, "main", vmloop.I64(100)) // warm the pools
	const links = 20000
	made := sched.TaskRecordsMade()
	testkit.Run(t, rt, p, "main", vmloop.I64(links))
	// A GC empties the pool now and then; otherwise every link reuses one.
	if n := sched.TaskRecordsMade() - made; n > links/10 {
		t.Fatalf("%d task records allocated for %d spawned links (records are not reused)", n, links)
	}
}

// recycleMixedSrc: children wait on an event (then cancelled), on a host
// call (cancelled or not; completed late), or sleep; main checks each
// successful join against its child's argument and frees the handles.
const recycleMixedSrc = `
.func main(n:i64) -> i64
  .local i:i64, t:ref, v:i64, ok:i64, k:i64, m:i64, ev:ref, bad:i64
  const i, 0
  const ok, 0
  evnew ev
l:
  jge   i, n, done
  andi  m, i, 3
  jeqi  m, 0, sev
  jeqi  m, 1, shost
  spawn t, sleeper, i
  jmp   j
sev:
  spawn t, evchild, ev, i
  yield
  cancel t
  jmp   j
shost:
  spawn t, hostchild, i
  andi  k, i, 4
  jeqi  k, 0, j
  yield
  cancel t
j:
  outcome k, t
  jnei  k, 0, f
  joini v, t
  jne   v, i, wrong
  addi  ok, ok, 1
f:
  free  t
  addi  i, i, 1
  jmp   l
wrong:
  const bad, -1
  sub   bad, bad, i
  ret   bad
done:
  ret   ok
.end
.func evchild(ev:ref, x:i64) -> i64
  evwait ev
  ret   x
.end
.func hostchild(x:i64) -> i64
  .local v:i64
  intr  v, test.echo2, x
  ret   v
.end
.func sleeper(x:i64) -> i64
  .local d:i64
  andi  d, x, 7
  muli  d, d, 500
  intr  _, time.sleep, d
  ret   x
.end`

// TestRecycledRecordsIgnoreStaleCompletions: task records of completed
// children are reused (Task.refs) while stale holders of their waits remain
// — event waiter lists, late host completions (a cancelled child's always
// arrives late), timers — and Scheduler.Tasks walks the registry (debugsrv
// does): every successful join returns its own child's argument, so no
// stale completion ever completes the wait of the task that reuses its
// record. Three mains at once on 2 and 4 workers; under -race it also
// checks that recycling a record does not race with a stale holder.
func TestRecycledRecordsIgnoreStaleCompletions(t *testing.T) {
	testkit.Workers(t, []int{2, 4}, staleCompletions)
}

func staleCompletions(t *testing.T, workers int) {
	rt := testkit.Runtime(t, jade.Options{Workers: workers})
	var late atomic.Int64
	err := rt.RegisterIntrinsic("test.echo2", []vmloop.Type{vmloop.TI64}, vmloop.TI64, 0, func(c *bus.Call) (vmloop.Value, error) {
		x := c.Args()[0]
		done := c.Suspend()
		time.AfterFunc(time.Duration(rand.IntN(30))*time.Microsecond, func() {
			if !done.Complete(x) {
				late.Add(1)
			}
		})
		return vmloop.Void(), nil
	})
	require.NoError(t, err)
	p := testkit.Load(t, rt, recycleMixedSrc)
	n := int64(2000)
	if raceEnabled {
		n = 600
	}
	stop := make(chan struct{})
	var wg2 sync.WaitGroup
	wg2.Add(1)
	go func() {
		defer wg2.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = hostbus.Scheduler(rt).Tasks()
			time.Sleep(50 * time.Microsecond)
		}
	}()
	var wg sync.WaitGroup
	for m := 0; m < 3; m++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := testkit.Run(t, rt, p, "main", vmloop.I64(n))
			switch {
			case o.Kind != sched.Success:
				t.Errorf("workers %d: main: %v", workers, o)
			case o.Value.Int() < 0:
				t.Errorf("workers %d: child %d's join returned another task's result", workers, -o.Value.Int()-1)
			}
		}()
	}
	wg.Wait()
	close(stop)
	wg2.Wait()
	time.Sleep(5 * time.Millisecond)
	t.Logf("workers %d: %d late completions dropped", workers, late.Load())
}

// TestTaskHandlePassedAtSpawn: a task handle passed as a spawn argument is
// shared by the child's heap (counted, not pinned: vmloop ResetSpawn), so
// the record stays valid while either heap names it and is reused after:
// each joiner of a handle it was given gets that task's own result.
func TestTaskHandlePassedAtSpawn(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 2})
	p := testkit.Load(t, rt, `
.func main(n:i64) -> i64
  .local i:i64, a:ref, b:ref, v:i64, sum:i64, want:i64
  const i, 0
  const sum, 0
  const want, 0
l:
  jge   i, n, d
  spawn a, value, i
  spawn b, joiner, a
  free  a
  joini v, b
  free  b
  add   sum, sum, v
  add   want, want, i
  addi  i, i, 1
  jmp   l
d:
  sub   sum, sum, want
  ret   sum
.end
.func value(x:i64) -> i64
  yield
  ret   x
.end
.func joiner(t:ref) -> i64
  .local v:i64
  joini v, t
  ret   v
.end`)
	for _, n := range []int64{1, 3000} {
		o := testkit.Run(t, rt, p, "main", vmloop.I64(n))
		require.Equal(t, sched.Success, o.Kind, "n=%d: %v (want Success(0): each joiner returns its own task's value)", n, o)
		require.Equal(t, int64(0), o.Value.Int(), "n=%d: %v (want Success(0): each joiner returns its own task's value)", n, o)
	}
}
