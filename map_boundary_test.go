package jade_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// mapBoundarySrc: main makes a map, spawns child with it (a copy: the
// child's puts do not show in main's), joins the child's own map as its
// result (a copy), and receives a third map from a channel; it returns a
// digest of what it saw.
const mapBoundarySrc = `
.abi 1.6
.func main() -> i64
  .local m:ref, t:ref, r:ref, ch:ref, p:ref, v:i64, sum:i64, k:ref, s:ref
  intr    m, map.new_str_ref
  const   k, "a"
  ldb     s, "one"
  intr    _, map.sput_ref, m, k, s
  spawn   t, child, m
  joinr   r, t
  intr    v, map.len, m                ; 1: the child's put went to its copy
  mov     sum, v
  intr    v, map.len, r                ; 2: the child's map came back
  muli    v, v, 10
  add     sum, sum, v
  intr    ch, chan.new_ref, 1
  spawn   t, sender, ch
  intr    p, chan.recv_ref, ch
  intr    v, map.iget_i64, p, 7        ; 49
  muli    v, v, 100
  add     sum, sum, v
  joinv   t
  ret     sum
.end

.func child(m:ref) -> ref
  .local k:ref, s:ref
  const   k, "b"
  ldb     s, "two"
  intr    _, map.sput_ref, m, k, s
  ret     m
.end

.func sender(ch:ref) -> i64
  .local m:ref, z:i64
  intr    m, map.new_i64_i64
  intr    _, map.iput_i64, m, 7, 49
  intr    _, chan.send_ref, ch, m
  intr    _, map.iput_i64, m, 7, 0     ; after the send: the message is a copy
  const   z, 0
  ret     z
.end
`

// TestMapCrossesTasks: a map crosses a spawn, a join and a channel as a
// copy (mutable objects never cross shared), on 1 and 2 workers; a host
// gets a task's map as a map value; the engine's memory budget balances
// once the tasks have ended.
func TestMapCrossesTasks(t *testing.T) {
	testkit.Workers(t, []int{1, 2}, func(t *testing.T, workers int) {
		rt := testkit.Runtime(t, jade.Options{Workers: workers})
		p := testkit.Load(t, rt, mapBoundarySrc)
		o := testkit.Run(t, rt, p, "main")
		require.Equal(t, sched.Success, o.Kind, "%v", o)
		require.Equal(t, int64(1+20+4900), o.Value.Int())

		o = testkit.Run(t, rt, p, "child", mustMap(t))
		require.Equal(t, sched.Success, o.Kind, "%v", o)
		require.Equal(t, vmloop.KindMap, o.Value.Kind())
		require.Equal(t, `map{"z": void, "b": bytes"two"}`, o.Value.String())

		big := testkit.Load(t, rt, mapFillSrc)
		e := hostbus.Member(rt).Engine()
		o = testkit.Run(t, rt, big, "main", vmloop.I64(100_000))
		require.Equal(t, sched.Success, o.Kind, "%v", o)
		require.Equal(t, int64(100_000), o.Value.Int())
		testkit.WaitFor(t, func() bool {
			return hostbus.Scheduler(rt).LiveTasks() == 0 && e.LiveTasks() == 0 && e.MemoryBytes() == 0
		})
	})
}

// mapFillSrc: main(n) fills a map<i64,f64> with n keys and returns its
// length (its memory goes back with the task).
const mapFillSrc = `
.abi 1.6
.func main(n:i64) -> i64
  .local m:ref, i:i64, l:i64, x:f64
  intr    m, map.new_i64_f64
  const   i, 0
loop:
  jge     i, n, done
  itof    x, i
  intr    _, map.iput_f64, m, i, x
  addi    i, i, 1
  jmp     loop
done:
  intr    l, map.len, m
  ret     l
.end
`

func mustMap(t *testing.T) vmloop.Value {
	m, err := vmloop.Map(vmloop.KindString, vmloop.TRef, vmloop.Str("z"), vmloop.Void())
	require.NoError(t, err)
	return m
}
