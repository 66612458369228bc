package vmloop_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
	"github.com/jadevm/jade/vmloop/jasm"
)

const parseHeadSrc = `.abi 1.7
; parse runs http.parse_head on b[0:n] with an out array of size:
; its result, or out[k] when the result is >= 0.
.func parse(b:ref, n:i64, size:i64, k:i64) -> i64
  .local out:ref, r:i64
  anew    out, size, i64
  intr    r, http.parse_head, b, 0, 0, n, 100, out
  jlti    r, 0, done
  ageti   r, out, k
done:
  ret     r
.end
`

// TestParseHeadRuns: http.parse_head runs in the VM loop (no request to
// the scheduler), charges one reduction per 64 bytes it looks at beside
// its base cost, and traps on an out array too short and a range outside
// the buffer.
func TestParseHeadRuns(t *testing.T) {
	p, err := jasm.Assemble("parse.jasm", []byte(parseHeadSrc))
	require.NoError(t, err)
	require.NoError(t, vmloop.Verify(p, nil))
	run := func(head string, n, size, k int64) *vmloop.Exec {
		e, err := vmloop.NewExec(p, p.FuncIndex("parse"), []vmloop.Value{vmloop.Bytes([]byte(head)), vmloop.I64(n), vmloop.I64(size), vmloop.I64(k)}, vmloop.DefaultLimits, 3)
		require.NoError(t, err)
		sig := e.Run(1_000_000)
		require.NotEqual(t, vmloop.SigIntrinsic, sig, "http.parse_head left the VM loop as a request")
		return e
	}
	short := "GET /abc HTTP/1.1\r\nHost: h\r\n\r\n"
	e := run(short, int64(len(short)), 9, 3)
	require.Equal(t, int64(4), e.Result().Int(), "the target starts at 4")
	base := e.Reductions()
	long := "GET /abc HTTP/1.1\r\nHost: h\r\nX: " + strings.Repeat("a", 64*40) + "\r\n\r\n"
	e = run(long, int64(len(long)), 9, 3)
	require.Equal(t, int64(4), e.Result().Int())
	require.GreaterOrEqual(t, e.Reductions()-base, uint64(2*40-2), "charged by the bytes looked at (twice: the search and the parse)")

	e = run(short, int64(len(short)), 8, 0)
	require.Equal(t, vmloop.TrapBounds, e.Trap().Code)
	require.Contains(t, e.Trap().Msg, "out has 8 elements (at least 9)")
	e = run(short, int64(len(short))+1, 9, 0)
	require.Equal(t, vmloop.TrapBounds, e.Trap().Code)
	require.Contains(t, e.Trap().Msg, "http.parse_head: start 0, scan 0, end")
}
