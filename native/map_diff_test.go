package native

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
)

// mapDiffSrc drives two maps (i64 keys, and string keys with ref values)
// with a pseudo-random mix of puts, gets, deletes and iterations that
// delete as they go, and sums what it reads; wrong(m) traps (a map of
// i64 values written with f64).
const mapDiffSrc = `
.abi 1.6
.func main(n:i64, seed:i64) -> i64
  .local m:ref, s:ref, i:i64, x:i64, k:i64, op:i64, v:i64, sum:i64, ks:ref, r:ref, cur:i64, f:i64, mul:i64
  intr    m, map.new_i64_i64
  intr    s, map.new_str_ref
  const   sum, 0
  const   i, 0
  mov     x, seed
  const   mul, 6364136223846793005
loop:
  jge     i, n, done
  mul     x, x, mul
  addi    x, x, 1442
  shri    k, x, 40
  andi    k, k, 1023
  shri    op, x, 20
  andi    op, op, 15
  jlti    op, 7, put
  jlti    op, 12, get
  jlti    op, 15, del
  const   cur, -1                       ; iterate, deleting the odd values
iter:
  intr    cur, map.next, m, cur
  jlti    cur, 0, next
  intr    v, map.val_i64, m, cur
  add     sum, sum, v
  andi    v, v, 1
  jz      v, iter
  intr    _, map.del_at, m, cur
  jmp     iter
put:
  intr    _, map.iput_i64, m, k, x
  itos    ks, k
  intr    _, map.sput_ref, s, ks, ks
  jmp     next
get:
  intr    v, map.iget_i64, m, k
  add     sum, sum, v
  intr    f, map.found, m
  add     sum, sum, f
  itos    ks, k
  intr    r, map.sget_ref, s, ks
  intr    f, map.found, s
  jz      f, next
  slen    v, r
  add     sum, sum, v
  jmp     next
del:
  intr    f, map.idel, m, k
  add     sum, sum, f
  itos    ks, k
  intr    f, map.sdel, s, ks
  add     sum, sum, f
next:
  addi    i, i, 1
  jmp     loop
done:
  intr    v, map.len, m
  add     sum, sum, v
  intr    v, map.len, s
  add     sum, sum, v
  ret     sum
.end

.func wrong(m:ref) -> i64
  .local x:f64, i:i64
  const   x, 0.5
  intr    _, map.iput_f64, m, 1, x
  const   i, 0
  ret     i
.end
`

// TestMapDiff: the map intrinsics run the same on both loops (they leave
// the C loop for the Go loop's step, which runs them in the VM): results,
// reductions, preemption points and traps, under random small budgets.
func TestMapDiff(t *testing.T) {
	if !Available() {
		t.Skip("C loop not compiled in")
	}
	p := mustProgram(t, "mapdiff.jasm", mapDiffSrc)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 20 {
		st, err := runDiff(p, p.FuncIndex("main"), []vmloop.Value{vmloop.I64(3000), vmloop.I64(int64(i))}, vmloop.DefaultLimits,
			func() int64 { return int64(1 + rng.IntN(200)) }, completeAnswer, 1_000_000)
		require.NoError(t, err)
		require.Equal(t, vmloop.SigCompleted, st.sig)
		require.Zero(t, st.intrinsics, "no map intrinsic leaves the VM as a request")
	}
	m, err := vmloop.Map(vmloop.KindI64, vmloop.TI64)
	require.NoError(t, err)
	st, err := runDiff(p, p.FuncIndex("wrong"), []vmloop.Value{m}, vmloop.DefaultLimits,
		func() int64 { return 100 }, completeAnswer, 1000)
	require.NoError(t, err)
	require.Equal(t, vmloop.SigTrapped, st.sig)
}
