package native

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/examples"
	"github.com/jadevm/jade/internal/vmhook"
	"github.com/jadevm/jade/vmloop"
)

// srcFib is examples/fib.jasm; its entry for these tests is fib(n)
// (entryOf), not main.
var srcFib = string(examples.Fib)

// entryOf is the function the tests start in: fib(n) for
// examples/fib.jasm, main (function 0) for the other programs.
func entryOf(p *vmloop.Program) int {
	if i := p.FuncIndex("fib"); i >= 0 {
		return i
	}
	return 0
}

// srcLoop sums i*i mod 7 and float work for i < n (a hot inner loop).
const srcLoop = `
.abi 1.0
.func main(n:i64) -> i64
  .local i:i64, s:i64, t:i64, seven:i64, f:f64, g:f64
  const i, 0
  const s, 0
  const seven, 7
  const f, 0.0
  const g, 0.5
loop:
  jge   i, n, done
  mul   t, i, i
  rem   t, t, seven
  add   s, s, t
  fadd  f, f, g
  addi  i, i, 1
  jmp   loop
done:
  ftoi  t, f
  add   s, s, t
  ret   s
.end
`

// srcParse counts the spaces of a byte buffer of n bytes k times (a
// byte-scanning loop, as in a RESP parser).
const srcParse = `
.abi 1.0
.func main(n:i64, k:i64) -> i64
  .local b:ref, i:i64, c:i64, cnt:i64, len:i64, j:i64, v:i64, sp:i64
  bnew  b, n
  const i, 0
  const sp, 32
fill:
  jge   i, n, filled
  andi  v, i, 7
  jnei  v, 3, skip
  bset  b, i, sp
skip:
  addi  i, i, 1
  jmp   fill
filled:
  const cnt, 0
  const j, 0
outer:
  jge   j, k, done
  blen  len, b
  const i, 0
scan:
  jge   i, len, next
  bget  c, b, i
  jnei  c, 32, nospace
  addi  cnt, cnt, 1
nospace:
  addi  i, i, 1
  jmp   scan
next:
  addi  j, j, 1
  jmp   outer
done:
  ret   cnt
.end
`

const srcTail = `
.abi 1.0
.func main(n:i64) -> i64
  .local a:i64, r:i64
  const a, 0
  call  r, sum, n, a
  ret   r
.end
.func sum(n:i64, acc:i64) -> i64
  .local t:i64
  jlei  n, 0, done
  add   acc, acc, n
  subi  n, n, 1
  tailcall sum, n, acc
done:
  ret   acc
.end
`

// srcBig tail-calls into a function with a large frame (the register
// stack grows in Go, then the C loop resumes) and recurses deeply.
var srcBig = `
.abi 1.0
.func main(n:i64) -> i64
  tailcall big, n
.end
.func big(n:i64) -> i64
  .local a:i64, b:i64` + padLocals(200) + `
  jlei  n, 0, done
  subi  a, n, 1
  call  a, big, a
  addi  a, a, 1
  ret   a
done:
  const a, 0
  ret   a
.end
`

const srcThrow = `
.abi 1.0
.func main(n:i64) -> i64
  .local i:i64, s:i64, e:ref, r:i64
  const i, 0
  const s, 0
loop:
  jge   i, n, done
  .try  tb, te, caught, e
tb:
  call  r, maybe, i
te:
  add   s, s, r
  jmp   next
caught:
  addi  s, s, 1000
next:
  intr  r, task.id
  addi  i, i, 1
  jmp   loop
done:
  ret   s
.end
.func maybe(i:i64) -> i64
  .local t:i64, m:ref, e:ref
  andi  t, i, 3
  jnei  t, 2, ok
  const m, "boom"
  newerr e, m
  throw e
ok:
  muli  t, i, 3
  ret   t
.end
`

// srcArith returns one i64 result of an arithmetic edge case selected by k.
const srcArith = `
.abi 1.0
.func main(k:i64, b:i64, c:i64) -> i64
  .local r:i64
  jeqi k, 0, div
  jeqi k, 1, rem
  jeqi k, 2, shl
  jeqi k, 3, shr
  jeqi k, 4, sar
  jeqi k, 5, mul
  ret  k
div:
  div r, b, c
  ret r
rem:
  rem r, b, c
  ret r
shl:
  shl r, b, c
  ret r
shr:
  shr r, b, c
  ret r
sar:
  sar r, b, c
  ret r
mul:
  mul r, b, c
  sub r, r, c
  neg r, r
  ret r
.end
.func fconv(x:f64) -> i64
  .local r:i64, y:f64, t:i64
  ftoi r, x
  fsqrt y, x
  fneg y, y
  ftoi t, y
  xor  r, r, t
  itof y, r
  ftoi t, y
  xor  r, r, t
  ret  r
.end
`

// padLocals declares n more i64 registers (a big frame).
func padLocals(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, ", pad%d:i64", i)
	}
	return b.String()
}

func budgets(bs ...int64) func() int64 {
	i := 0
	return func() int64 { b := bs[i%len(bs)]; i++; return b }
}

func diff(t *testing.T, name string, p *vmloop.Program, fn int, args []vmloop.Value, lim vmloop.Limits, budget func() int64) diffStats {
	t.Helper()
	st, err := runDiff(p, fn, args, lim, budget, completeAnswer, 1_000_000)
	require.NoError(t, err, "%s", name)
	return st
}

// TestDiffPrograms runs hand-written programs on both loops with several
// budgets, comparing every preemption point.
func TestDiffPrograms(t *testing.T) {
	needC(t)
	lim := vmloop.DefaultLimits
	cases := []struct {
		name string
		src  string
		args []vmloop.Value
		want int64
	}{
		{"fib", srcFib, []vmloop.Value{vmloop.I64(18)}, 2584},
		{"loop", srcLoop, []vmloop.Value{vmloop.I64(5000)}, -1},
		{"parse", srcParse, []vmloop.Value{vmloop.I64(300), vmloop.I64(5)}, 5 * 38},
		{"tail", srcTail, []vmloop.Value{vmloop.I64(3000)}, 3000 * 3001 / 2},
		{"big", srcBig, []vmloop.Value{vmloop.I64(300)}, 300},
		{"throw", srcThrow, []vmloop.Value{vmloop.I64(50)}, -1},
	}
	defer vmhook.SetFallback(vmhook.DefaultFallback)
	for _, c := range cases {
		p := mustProgram(t, c.name, c.src)
		for _, fb := range []int{0, vmhook.DefaultFallback} {
			vmhook.SetFallback(fb)
			for _, b := range []func() int64{budgets(1), budgets(2, 3, 5, 7), budgets(97), budgets(25_000), budgets(math.MaxInt64 / 2)} {
				st := diff(t, c.name, p, entryOf(p), c.args, lim, b)
				require.Equal(t, vmloop.SigCompleted, st.sig, "%s: %v", c.name, st.sig)
			}
		}
		// the result itself, on the C loop
		e, _ := vmloop.NewExec(p, entryOf(p), c.args, lim, 1)
		for {
			sig := e.Run(1000)
			if sig == vmloop.SigIntrinsic {
				completeAnswer(e, 0)
				continue
			}
			if sig != vmloop.SigPreempted {
				break
			}
		}
		if c.want >= 0 && e.Result().Int() != c.want {
			t.Errorf("%s = %v, want %d", c.name, e.Result(), c.want)
		}
	}
}

// TestDiffArith covers the arithmetic edge cases: MIN/-1, x/0, shifts by
// 64, 65 and -1, wrapping multiplication, ftoi of NaN, ±Inf and 1e300.
func TestDiffArith(t *testing.T) {
	needC(t)
	vmhook.SetFallback(0) // everything in C but the exits
	defer vmhook.SetFallback(vmhook.DefaultFallback)
	p := mustProgram(t, "arith", srcArith)
	vals := []int64{math.MinInt64, -1, 0, 1, 2, 63, 64, 65, -64, math.MaxInt64, 7, -7}
	traps := 0
	for k := int64(0); k < 6; k++ {
		for _, b := range vals {
			for _, c := range vals {
				st := diff(t, "arith", p, 0, []vmloop.Value{vmloop.I64(k), vmloop.I64(b), vmloop.I64(c)}, vmloop.DefaultLimits, budgets(1000))
				if st.sig == vmloop.SigTrapped {
					traps++
				}
			}
		}
	}
	if traps == 0 {
		t.Error("no division trap reached")
	}
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e300, -1e300, 0x1p63, -0x1p63, 9.2e18, -9.2e18, 0.5, -0.5, 2, -2, math.Copysign(0, -1)} {
		st := diff(t, "fconv", p, 1, []vmloop.Value{vmloop.F64(x)}, vmloop.DefaultLimits, budgets(1000))
		require.Equal(t, vmloop.SigCompleted, st.sig, "fconv(%v): %v", x, st.sig)
	}
}

// TestDiffLimits: the call depth limit traps at the same CALL, and a
// stopped task preempts at the same safe point.
func TestDiffLimits(t *testing.T) {
	needC(t)
	vmhook.SetFallback(0)
	defer vmhook.SetFallback(vmhook.DefaultFallback)
	p := mustProgram(t, "fib", srcFib)
	for _, maxf := range []int{1, 2, 5, 17} {
		st := diff(t, "depth", p, entryOf(p), []vmloop.Value{vmloop.I64(25)}, vmloop.Limits{MaxFrames: maxf}, budgets(10, 1000))
		require.Equal(t, vmloop.SigTrapped, st.sig, "MaxFrames %d: %v", maxf, st.sig)
	}
	// Stop: both loops return at the first safe point, with budget left
	lp := mustProgram(t, "loop", srcLoop)
	var es [2]*vmloop.Exec
	for i := range es {
		es[i], _ = vmloop.NewExec(lp, 0, []vmloop.Value{vmloop.I64(1000)}, vmloop.DefaultLimits, 1)
		es[i].SetNative(i == 1)
		es[i].Stop()
	}
	for r := 0; r < 3; r++ {
		sg, sn := es[0].Run(1_000_000), es[1].Run(1_000_000)
		fg, pg := es[0].Where()
		fn, pn := es[1].Where()
		if sg != vmloop.SigPreempted || sg != sn || fg != fn || pg != pn || es[0].Left() != es[1].Left() {
			t.Fatalf("stop: go %v %s@%d %d, native %v %s@%d %d", sg, fg, pg, es[0].Left(), sn, fn, pn, es[1].Left())
		}
	}
}

// TestDiffJasmFiles runs the assembler's self-checking test programs and
// the examples on both loops.
func TestDiffJasmFiles(t *testing.T) {
	needC(t)
	files, _ := filepath.Glob("../vmloop/jasm/testdata/*.jasm")
	ex, _ := filepath.Glob("../examples/*.jasm")
	files = append(files, ex...)
	ran := 0
	defer vmhook.SetFallback(vmhook.DefaultFallback)
	for _, file := range files {
		src, err := os.ReadFile(file)
		require.NoError(t, err)
		p := mustProgram(t, file, string(src))
		fn := p.FuncIndex("main")
		if fn < 0 {
			continue
		}
		var args []vmloop.Value
		for _, pt := range p.Funcs[fn].Params {
			switch pt {
			case vmloop.TI64:
				args = append(args, vmloop.I64(3))
			case vmloop.TF64:
				args = append(args, vmloop.F64(3))
			default:
				args = append(args, vmloop.StrArray(nil))
			}
		}
		runs := []func() int64{budgets(1), budgets(13), budgets(25_000), budgets(25_000)}
		fallback := []int{0, 0, 0, vmhook.DefaultFallback}
		if raceEnabled {
			// One goroutine: the race detector has nothing to find here and
			// makes each run cost seconds; `make unit` runs all four.
			runs, fallback = runs[1:2], fallback[1:2]
		}
		for i, b := range runs {
			vmhook.SetFallback(fallback[i])
			_, err := runDiff(p, fn, args, vmloop.DefaultLimits, b, completeAnswer, 2_000_000)
			require.NoError(t, err, "%s", file)
		}
		ran++
	}
	t.Logf("%d jasm programs agree", ran)
}
