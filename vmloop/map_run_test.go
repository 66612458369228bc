package vmloop_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
	"github.com/jadevm/jade/vmloop/jasm"
)

// mapProg assembles and verifies a program of ABI 1.6.
func mapProg(t *testing.T, src string) *vmloop.Program {
	t.Helper()
	p, err := jasm.Assemble("map.jasm", []byte(".abi 1.6\n"+src))
	require.NoError(t, err)
	require.NoError(t, vmloop.Verify(p, nil))
	return p
}

// mapRun runs function fn of p with args to its end on the Go loop.
func mapRun(t *testing.T, p *vmloop.Program, fn string, args ...vmloop.Value) *vmloop.Exec {
	t.Helper()
	e, err := vmloop.NewExec(p, p.FuncIndex(fn), args, vmloop.DefaultLimits, 3)
	require.NoError(t, err)
	sig := vmloop.SigPreempted
	for i := 0; sig == vmloop.SigPreempted; i++ {
		require.Less(t, i, 1_000_000)
		sig = e.Run(10_000)
	}
	require.NotEqual(t, vmloop.SigIntrinsic, sig, "a map intrinsic left the VM loop as a request")
	return e
}

const mapSrc = `
.func wrong_value(m:ref) -> i64
  .local x:f64, i:i64
  const   x, 1.5
  intr    _, map.iput_f64, m, 1, x  ; trap:wrong_value
  const   i, 0
  ret     i
.end

.func wrong_key(p:ref) -> i64
  .local k:ref, v:i64
  const   k, "a"
  intr    v, map.sget_i64, p, k  ; trap:wrong_key
  ret     v
.end

.func nest_array() -> i64
  .local m:ref, a:ref, i:i64
  intr    m, map.new_i64_i64
  const   i, 1
  anew    a, i, ref
  const   i, 0
  asetr   a, i, m  ; trap:nest_array
  ret     i
.end

.func nest_map() -> i64
  .local m:ref, n:ref, i:i64
  intr    m, map.new_i64_ref
  intr    n, map.new_i64_ref
  intr    _, map.iput_ref, m, 1, n  ; trap:nest_map
  const   i, 0
  ret     i
.end

.func bad_cursor() -> i64
  .local m:ref, v:i64
  intr    m, map.new_i64_i64
  intr    _, map.iput_i64, m, 1, 2
  intr    _, map.idel, m, 1
  intr    v, map.val_i64, m, 0  ; trap:bad_cursor
  ret     v
.end

.func long_key() -> i64
  .local m:ref, b:ref, n:i64
  intr    m, map.new_bytes_i64
  const   n, 70000
  bnew    b, n
  intr    _, map.sput_i64, m, b, 1  ; trap:long_key
  ret     n
.end

.func make(n:i64) -> ref
  .local m:ref, i:i64, k:ref, s:ref
  intr    m, map.new_str_ref
  const   i, 0
loop:
  jge     i, n, done
  itos    k, i
  ldb     s, "v"
  intr    _, map.sput_ref, m, k, s
  addi    i, i, 1
  jmp     loop
done:
  ret     m
.end

.func total(m:ref) -> i64
  .local cur:i64, sum:i64, v:i64
  const   sum, 0
  const   cur, -1
loop:
  intr    cur, map.next, m, cur
  jlti    cur, 0, done
  intr    v, map.key_i64, m, cur
  add     sum, sum, v
  intr    v, map.val_i64, m, cur
  add     sum, sum, v
  jmp     loop
done:
  ret     sum
.end

.func churn(n:i64) -> i64
  .local m:ref, i:i64, k:ref, s:ref, l:i64
  intr    m, map.new_bytes_i64
  const   i, 0
loop:
  jge     i, n, done
  itos    s, i
  stob    k, s
  intr    _, map.sput_i64, m, k, i
  free    k
  free    s
  addi    i, i, 1
  jmp     loop
done:
  intr    l, map.len, m
  free    m
  ret     l
.end
`

// TestMapTraps: each misuse traps with its code and the line of the
// instruction (wrong value type or key kind where the verifier cannot
// tell, a map nested in an array or a map, a cursor at a deleted entry, a
// key longer than 64 KiB).
func TestMapTraps(t *testing.T) {
	p := mapProg(t, mapSrc)
	m, err := vmloop.Map(vmloop.KindI64, vmloop.TI64, vmloop.I64(1), vmloop.I64(2))
	require.NoError(t, err)
	for _, c := range []struct {
		fn   string
		arg  []vmloop.Value
		code vmloop.TrapCode
		msg  string
	}{
		{"wrong_value", []vmloop.Value{m}, vmloop.TrapKind, "map.iput_f64 on a map of i64 values (map<i64,i64>)"},
		{"wrong_key", []vmloop.Value{m}, vmloop.TrapKind, "map.sget_i64 on a map of i64 keys"},
		{"nest_array", nil, vmloop.TrapHandle, "a map cannot be an array element"},
		{"nest_map", nil, vmloop.TrapHandle, "a map cannot be a map's value"},
		{"bad_cursor", nil, vmloop.TrapBounds, "map.val_i64: no entry at cursor 0"},
		{"long_key", nil, vmloop.TrapBounds, "map key of 70000 bytes"},
	} {
		t.Run(c.fn, func(t *testing.T) {
			e := mapRun(t, p, c.fn, c.arg...)
			tr := e.Trap()
			require.Equal(t, c.code, tr.Code, "%+v", tr)
			require.Contains(t, tr.Msg, c.msg)
			require.Equal(t, markLine(t, "; trap:"+c.fn), tr.Line, "%+v", tr)
		})
	}
}

// markLine is the line of mapSrc, as mapProg assembles it, that holds
// mark.
func markLine(t *testing.T, mark string) int {
	for i, l := range strings.Split(".abi 1.6\n"+mapSrc, "\n") {
		if strings.Contains(l, mark) {
			return i + 1
		}
	}
	t.Fatalf("no line marked %q", mark)
	return 0
}

// TestMapCrossesBoundary: a map made by a task comes out as a map value
// (its ref values copied), and goes into another as an argument: a copy,
// whose keys and values are the same.
func TestMapCrossesBoundary(t *testing.T) {
	p := mapProg(t, mapSrc)
	e := mapRun(t, p, "make", vmloop.I64(3))
	require.Equal(t, vmloop.SigCompleted, e.Run(1), "%v", e.Trap())
	v := e.Result()
	require.Equal(t, vmloop.KindMap, v.Kind())
	require.Equal(t, `map{"0": bytes"v", "1": bytes"v", "2": bytes"v"}`, v.String())

	in, err := vmloop.Map(vmloop.KindI64, vmloop.TI64, vmloop.I64(1), vmloop.I64(10), vmloop.I64(2), vmloop.I64(20))
	require.NoError(t, err)
	e = mapRun(t, p, "total", in)
	require.Equal(t, int64(33), e.Result().Int())

	_, err = vmloop.Map(vmloop.KindI64, vmloop.TI64, vmloop.I64(1), vmloop.I64(10), vmloop.I64(1), vmloop.I64(20))
	require.ErrorContains(t, err, "twice")
	_, err = vmloop.Map(vmloop.KindI64, vmloop.TRef, vmloop.I64(1), in)
	require.ErrorContains(t, err, "value 0 is map")

	// Maps do not nest: an array holding a map does not enter a heap.
	arr, err := vmloop.Array(vmloop.KindArrayRef, in)
	require.NoError(t, err)
	_, err = vmloop.NewExec(p, p.FuncIndex("total"), []vmloop.Value{arr}, vmloop.DefaultLimits, 3)
	require.ErrorContains(t, err, "array<ref> element 0 is map")
}

// TestMapHeapBalances: a task that puts and frees keys and frees its map
// ends with no heap bytes, and its heap's grant from the engine's budget
// returns whole when it is freed.
func TestMapHeapBalances(t *testing.T) {
	p := mapProg(t, mapSrc)
	b := vmloop.NewBudget(1 << 30)
	lim := vmloop.DefaultLimits
	lim.Memory = b
	e, err := vmloop.NewExec(p, p.FuncIndex("churn"), []vmloop.Value{vmloop.I64(20000)}, lim, 3)
	require.NoError(t, err)
	peak := int64(0)
	sig := vmloop.SigPreempted
	for sig == vmloop.SigPreempted {
		sig = e.Run(1000)
		peak = max(peak, e.HeapBytes())
	}
	require.Equal(t, vmloop.SigCompleted, sig, "%v", e.Trap())
	require.Equal(t, int64(20000), e.Result().Int())
	require.Greater(t, peak, int64(20000*40), "the map's entries are counted")
	require.Zero(t, e.HeapBytes(), "every map byte given back")
	e.Free()
	require.Zero(t, b.Used(), "the budget balances")
}

// TestMapHeapLimit: a map that grows past the heap limit traps with
// TrapHeapLimit, and the heap's count is what its objects hold.
func TestMapHeapLimit(t *testing.T) {
	p := mapProg(t, mapSrc)
	lim := vmloop.DefaultLimits
	lim.MaxHeapBytes = 1 << 20
	e, err := vmloop.NewExec(p, p.FuncIndex("make"), []vmloop.Value{vmloop.I64(1 << 20)}, lim, 3)
	require.NoError(t, err)
	sig := vmloop.SigPreempted
	for sig == vmloop.SigPreempted {
		sig = e.Run(10000)
	}
	require.Equal(t, vmloop.SigTrapped, sig)
	require.Equal(t, vmloop.TrapHeapLimit, e.Trap().Code, "%v", e.Trap())
	require.LessOrEqual(t, e.HeapBytes(), int64(1<<20))
}

// TestVerifyMapTypes: an operation that needs another key kind or value
// type than the map.new_* that made its map on every path is refused at
// load time with its source line; the matching forms, the ones that take
// any map, and a map of unknown type (a parameter) are accepted.
func TestVerifyMapTypes(t *testing.T) {
	for _, c := range []struct {
		op, err string
	}{
		{"intr _, map.iput_f64, m, 1, x", "intr map.iput_f64: r5 holds a map of i64 keys and i64 values on every path (made by map.new_*), not one of f64 values"},
		{"intr v, map.sget_i64, m, s", "intr map.sget_i64: r5 holds a map of i64 keys and i64 values on every path (made by map.new_*), not one of string or bytes keys"},
		{"intr x, map.val_f64, m, v", "not one of f64 values"},
		{"intr v, map.shas, m, s", "not one of string or bytes keys"},
		{"intr _, map.iput_i64, m, 1, v", ""},
		{"intr v, map.val_i64, m, v", ""},
		{"intr v, map.idel, m, v", ""},
		{"intr v, map.len, m", ""},
		{"intr _, map.iput_f64, p, 1, x", ""}, // a parameter: left to run time
	} {
		src := `.abi 1.6
.func f(p:ref) -> i64
  .local m:ref, v:i64, x:f64, s:ref
  intr    m, map.new_i64_i64
  const   v, 0
  const   x, 1.5
  const   s, "k"
  jz      v, two
two:
  ` + c.op + `
  ret     v
.end
`
		p, err := jasm.Assemble("verify_map.jasm", []byte(src))
		require.NoError(t, err)
		err = vmloop.Verify(p, nil)
		if c.err == "" {
			require.NoError(t, err, c.op)
			continue
		}
		require.ErrorContains(t, err, c.err, c.op)
		require.ErrorContains(t, err, "verify_map.jasm:10: f@", c.op)
	}
}

// TestMapRandomOpsModel: random sequences of map intrinsics (puts, gets
// with found, deletes, len, iterations that delete every key divisible by
// 3 at the cursor), assembled into one program each, compute the digest a
// Go map computes for the same sequence.
func TestMapRandomOpsModel(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		r := rand.New(rand.NewPCG(seed, 99))
		var sb strings.Builder
		sb.WriteString(`.func main() -> i64
  .local m:ref, k:i64, v:i64, f:i64, sum:i64, cur:i64, x:i64
  intr    m, map.new_i64_i64
  const   sum, 0
`)
		model := map[int64]int64{}
		var sum int64
		space := int64(8 << (seed % 4 * 2))
		for op := range 3000 {
			k := r.Int64N(space)
			switch x := r.IntN(100); {
			case x < 45:
				v := r.Int64N(1 << 40)
				fmt.Fprintf(&sb, "  const k, %d\n  const v, %d\n  intr _, map.iput_i64, m, k, v\n", k, v)
				model[k] = v
			case x < 75:
				fmt.Fprintf(&sb, "  const k, %d\n  intr v, map.iget_i64, m, k\n  add sum, sum, v\n  intr f, map.found, m\n  muli f, f, 1000\n  add sum, sum, f\n", k)
				v, ok := model[k]
				sum += v
				if ok {
					sum += 1000
				}
			case x < 95:
				fmt.Fprintf(&sb, "  const k, %d\n  intr f, map.idel, m, k\n  muli f, f, 7\n  add sum, sum, f\n", k)
				if _, ok := model[k]; ok {
					sum += 7
					delete(model, k)
				}
			case x < 98:
				sb.WriteString("  intr v, map.len, m\n  muli v, v, 13\n  add sum, sum, v\n")
				sum += 13 * int64(len(model))
			default:
				fmt.Fprintf(&sb, `  const cur, -1
it%[1]d:
  intr cur, map.next, m, cur
  jlti cur, 0, end%[1]d
  intr k, map.key_i64, m, cur
  intr v, map.val_i64, m, cur
  muli x, k, 3
  add sum, sum, x
  add sum, sum, v
  const x, 3
  rem x, k, x
  jnz x, it%[1]d
  intr _, map.del_at, m, cur
  jmp it%[1]d
end%[1]d:
`, op)
				for k, v := range model {
					sum += 3*k + v
					if k%3 == 0 {
						delete(model, k)
					}
				}
			}
		}
		sb.WriteString("  ret sum\n.end\n")
		p := mapProg(t, sb.String())
		e := mapRun(t, p, "main")
		require.Equal(t, vmloop.SigCompleted, e.Run(1), "seed %d: %v", seed, e.Trap())
		require.Equal(t, sum, e.Result().Int(), "seed %d", seed)
	}
}
