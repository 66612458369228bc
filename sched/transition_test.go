package sched_test

import (
	"context"
	"sync"
	"testing"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"

	"github.com/stretchr/testify/require"
)

// TestTransitionTable: exactly the edges of spec §2.1 are legal, and an
// illegal edge is refused (panics) rather than silently applied.
func TestTransitionTable(t *testing.T) {
	all := []sched.State{sched.Runnable, sched.Running, sched.Waiting, sched.Completed}
	want := map[[2]sched.State]bool{
		{sched.Runnable, sched.Running}:  true,
		{sched.Running, sched.Runnable}:  true,
		{sched.Running, sched.Waiting}:   true,
		{sched.Waiting, sched.Runnable}:  true,
		{sched.Running, sched.Completed}: true,
	}
	for _, from := range all {
		for _, to := range all {
			if got := sched.Legal(from, to); got != want[[2]sched.State{from, to}] {
				t.Errorf("Legal(%s, %s) = %v", from, to, got)
			}
			if want[[2]sched.State{from, to}] {
				continue
			}
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("illegal %s → %s was applied", from, to)
					}
				}()
				sched.NewTestTask(from).Transition(from, to)
			}()
		}
	}
}

// TestEveryTransitionHappens runs a program that goes through every edge
// of §2.1 and checks the observed edges are exactly the legal ones.
func TestEveryTransitionHappens(t *testing.T) {
	var mu sync.Mutex
	seen := map[[2]sched.State]int{}
	sched.SetTraceHook(func(id uint64, from, to sched.State) {
		mu.Lock()
		seen[[2]sched.State{from, to}]++
		mu.Unlock()
	})
	t.Cleanup(func() { sched.SetTraceHook(nil) })
	rt := testkit.Runtime(t, jade.Options{ReductionLimit: 50})
	p := testkit.Load(t, rt, `
.func main() -> i64
  .local c:ref, n:i64, v:i64
  const n, 1000
  spawn c, count, n     ; Runnable
  joini v, c            ; Running → Waiting → Runnable
  yield                 ; Running → Runnable
  ret v                 ; Running → Completed
.end
.func count(n:i64) -> i64
  .local i:i64
  const i, 0
l:
  jge i, n, d
  addi i, i, 1
  jmp l                 ; preempted: Running → Runnable
d:
  ret i
.end`)
	o := testkit.Run(t, rt, p, "main")
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.Equal(t, int64(1000), o.Value.Int(), "%v", o)
	mu.Lock()
	defer mu.Unlock()
	for _, e := range [][2]sched.State{
		{sched.Runnable, sched.Running}, {sched.Running, sched.Runnable}, {sched.Running, sched.Waiting},
		{sched.Waiting, sched.Runnable}, {sched.Running, sched.Completed},
	} {
		if seen[e] == 0 {
			t.Errorf("edge %s → %s never happened", e[0], e[1])
		}
	}
	for e := range seen {
		if !sched.Legal(e[0], e[1]) {
			t.Errorf("illegal edge %s → %s happened", e[0], e[1])
		}
	}
	_ = context.Background
	_ = vmloop.I64
}
