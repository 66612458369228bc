package native

import (
	"fmt"
	"github.com/jadevm/jade/internal/vmhook"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
)

// srcNested ends n+2 calls below main (n+4 frames in all) by what k
// selects: 0 divides by zero (trap), 1 throws uncaught, 2 indexes a buffer
// out of range (trap), 3 throws an error that mid catches, after which
// leaf traps one frame higher, 4 returns. Every frame on the way down
// spins a short loop, so small budgets preempt in nested frames too.
const srcNested = `
.func main(n:i64, k:i64) -> i64
  .local r:i64
  call  r, mid, n, k
  ret   r
.end

.func mid(n:i64, k:i64) -> i64
  .local r:i64, e:ref, m:i64
  jnei  k, 3, plain
  .try  tb, te, caught, e
tb:
  call  r, down, n, k
te:
  ret   r
caught:
  const m, 0
  call  r, down, m, m             ; traps (k = 0) below mid
  ret   r
plain:
  call  r, down, n, k
  ret   r
.end

.func down(n:i64, k:i64) -> i64
  .local i:i64, r:i64
  const i, 20
spin:
  subi  i, i, 1
  jgti  i, 0, spin
  jlei  n, 0, bottom
  subi  n, n, 1
  call  r, down, n, k
  addi  r, r, 1
  ret   r
bottom:
  call  r, leaf, k
  ret   r
.end

.func leaf(k:i64) -> i64
  .local z:i64, s:ref, e:ref, b:ref, i:i64
  jeqi  k, 0, div
  jeqi  k, 1, throw
  jeqi  k, 2, index
  jeqi  k, 3, throw
  ret   k
div:
  const z, 0
  div   z, k, z
  ret   z
throw:
  const s, "deep"
  newerr e, s
  throw e
index:
  const i, 4
  bnew  b, i
  const i, 9
  bget  i, b, i
  ret   i
.end
`

// TestDiffNestedStacks: both loops end a task that traps or throws
// uncaught several frames deep with the same trap (code, function, pc,
// line) and the same Jade call stack (TrapStack, ThrownStack), frames
// left out past MaxStackFrames included, over several budgets and with
// the whole run in C or the exit-dense regions in Go.
func TestDiffNestedStacks(t *testing.T) {
	needC(t)
	p := mustProgram(t, "nested.jasm", srcNested)
	defer vmhook.SetFallback(vmhook.DefaultFallback)
	cases := []struct {
		name   string
		n, k   int64
		sig    vmloop.Signal
		leaf   string // innermost function of the stack
		caller string // the next frame
	}{
		{"divide by zero 5 frames deep", 1, 0, vmloop.SigTrapped, "leaf", "down"},
		{"uncaught throw 6 frames deep", 2, 1, vmloop.SigThrown, "leaf", "down"},
		{"buffer index 4 frames deep", 0, 2, vmloop.SigTrapped, "leaf", "down"},
		{"trap after a caught throw", 3, 3, vmloop.SigTrapped, "leaf", "down"},
		{"uncaught throw past MaxStackFrames", vmloop.MaxStackFrames + 8, 1, vmloop.SigThrown, "leaf", "down"},
		{"returns", 3, 4, vmloop.SigCompleted, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			depth := int(c.n) + 4 // main, mid, n+1 downs, leaf
			if c.k == 3 {
				depth = 4 // main, mid (the handler), down, leaf
			}
			for _, fb := range []int{0, vmhook.DefaultFallback} {
				vmhook.SetFallback(fb)
				for _, b := range []func() int64{budgets(1), budgets(2, 3, 5, 7), budgets(97), budgets(math.MaxInt64 / 2)} {
					st, err := runDiff(p, 0, []vmloop.Value{vmloop.I64(c.n), vmloop.I64(c.k)}, vmloop.DefaultLimits, b, completeAnswer, 1_000_000)
					require.NoError(t, err, "fallback %d", fb)
					require.Equal(t, c.sig, st.sig)
					s := st.trapStack
					if c.sig == vmloop.SigThrown {
						s = st.thrownStack
						require.Zero(t, st.trapStack)
					} else {
						require.Zero(t, st.thrownStack)
					}
					if c.sig == vmloop.SigCompleted {
						require.Zero(t, s)
						continue
					}
					require.Equal(t, depth, s.Depth, "stack\n%v", s)
					require.Len(t, s.Frames, min(depth, vmloop.MaxStackFrames))
					require.Equal(t, c.leaf, s.Frames[0].Func)
					require.Equal(t, c.caller, s.Frames[1].Func)
					require.Equal(t, "nested.jasm", s.Frames[0].File)
					require.Positive(t, s.Frames[0].Line)
					if depth <= vmloop.MaxStackFrames {
						require.Equal(t, "main", s.Frames[depth-1].Func)
					}
				}
			}
		})
	}
}

// TestDiffEndComparesStacks: the differential check fails when two tasks
// end by the same trap (same function, pc and line) reached through call
// stacks of different depths, or throw the same error from different
// depths; it compared only the trap and the thrown value before.
func TestDiffEndComparesStacks(t *testing.T) {
	p := mustProgram(t, "nested.jasm", srcNested)
	end := func(n, k int64) *vmloop.Exec {
		e, err := vmloop.NewExec(p, 0, []vmloop.Value{vmloop.I64(n), vmloop.I64(k)}, vmloop.DefaultLimits, 1)
		require.NoError(t, err)
		e.SetNative(false)
		for e.Run(math.MaxInt64/2) == vmloop.SigPreempted {
		}
		return e
	}
	for _, k := range []int64{0, 1} {
		t.Run(fmt.Sprintf("k=%d", k), func(t *testing.T) {
			a, b := end(1, k), end(2, k)
			require.Equal(t, a.Trap(), b.Trap())
			require.Equal(t, a.Thrown().String(), b.Thrown().String())
			require.NoError(t, diffEnd(a, end(1, k)))
			require.ErrorContains(t, diffEnd(a, b), "stacks differ")
		})
	}
}
