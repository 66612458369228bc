package native

import (
	"github.com/jadevm/jade/internal/vmhook"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
)

// TestBytesPrimitivesDiff: the header parser of vmloop/jasm's headers.jasm
// (every ABI 1.3 byte primitive on a reused buffer) runs the same on both
// loops under random small budgets, and so do the chunked primitives over
// buffers of several chunks, preempted and resumed between chunks.
func TestBytesPrimitivesDiff(t *testing.T) {
	if !Available() {
		t.Skip("C loop not compiled in")
	}
	src, err := os.ReadFile("../vmloop/jasm/testdata/headers.jasm")
	require.NoError(t, err)
	p := mustProgram(t, "headers.jasm", string(src))
	rng := rand.New(rand.NewPCG(3, 4))
	for _, fallback := range []int{0, vmhook.DefaultFallback} {
		vmhook.SetFallback(fallback)
		for i := 0; i < 50; i++ {
			st, err := runDiff(p, p.FuncIndex("main"), []vmloop.Value{vmloop.StrArray(nil)}, vmloop.DefaultLimits,
				func() int64 { return int64(1 + rng.IntN(40)) }, completeAnswer, 100_000)
			require.NoError(t, err)
			require.Equal(t, vmloop.SigCompleted, st.sig)
		}
	}
	vmhook.SetFallback(vmhook.DefaultFallback)

	big := mustProgram(t, "big.jasm", `
.func main(hay:ref, s:ref) -> i64
  .local needle:ref, zero:i64, end:i64, at:i64, r:i64, v:i64, e:i64
  ldb     needle, "\r\n\r\n"
  const   zero, 0
  blen    end, hay
  bfindr  at, hay, needle, zero, end
  bcasecmp r, hay, zero, end, hay
  add     at, at, r
  bcmp    r, hay, zero, end, hay
  add     at, at, r
  slen    end, s
  stoi    v, e, s, zero, end
  add     at, at, v
  add     at, at, e
  ret     at
.end`)
	const n = 300 << 10
	hay := vmloop.Bytes([]byte(strings.Repeat("x", n) + "\r\n\r\n"))
	digits := vmloop.Str(strings.Repeat("0", n) + "7")
	st, err := runDiff(big, 0, []vmloop.Value{hay, digits}, vmloop.Limits{MaxHeapBytes: 8 << 20},
		func() int64 { return int64(1 + rng.IntN(900)) }, completeAnswer, 1_000_000)
	require.NoError(t, err)
	require.Equal(t, vmloop.SigCompleted, st.sig)
	require.Greater(t, st.preempts, 10, "the primitives were preempted between chunks")
}
