package native

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
)

// srcLongSteps has one task per long step of docs/ISA.md: chunked
// allocations and copies (sconcat, stob, btos, bslice, bnew, anew), the
// cycle check of asetr over a wide ref array, and a throw unwinding 2,000
// frames, in a loop so that preemptions land inside them.
const srcLongSteps = `
.func main(n:i64) -> i64
  .local i:i64, s:ref, b:ref, c:ref, a:ref, o:ref, k:i64, z:i64, one:i64, t:ref, d:i64, w:i64
  const   i, 0
  const   z, 0
  const   one, 1
loop:
  bnew    b, n
  btos    s, b
  sconcat s, s, s
  stob    c, s
  blen    k, c
  bslice  c, c, one, k
  anew    a, n, i64
  anew    a, n, ref
  anew    o, one, ref
  asetr   o, z, a
  const   d, 2000
  .try    t0, t1, h, t
t0:
  call    w, deep, d
t1:
  slen    k, s
  addi    i, i, 1
  jlti    i, 3, loop
  ret     k
h:
  addi    i, i, 1
  jlti    i, 3, loop
  ret     i
.end

.func deep(d:i64) -> i64
  .local e:ref, m:ref, x:i64
  jz      d, bottom
  subi    x, d, 1
  call    x, deep, x
  ret     x
bottom:
  const   m, "deep"
  newerr  e, m
  throw   e
.end
`

// TestLongStepsDiff: the chunked long steps charge, preempt and resume
// alike on the Go loop and the C loop, at every budget from 1 up.
func TestLongStepsDiff(t *testing.T) {
	if !Enabled() {
		t.Skip("no native loop in this build")
	}
	p := mustProgram(t, "longsteps.jasm", srcLongSteps)
	rng := rand.New(rand.NewPCG(18, 6))
	for _, budget := range []func() int64{
		func() int64 { return 1 },
		func() int64 { return 1 + rng.Int64N(3000) },
		func() int64 { return 25_000 },
	} {
		st, err := runDiff(p, 0, []vmloop.Value{vmloop.I64(300_000)}, vmloop.DefaultLimits, budget, completeAnswer, 1_000_000)
		require.NoError(t, err)
		require.Equal(t, vmloop.SigCompleted, st.sig)
		require.Greater(t, st.preempts, 10)
	}
}
