package vmloop_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
	"github.com/jadevm/jade/vmloop/jasm"
)

// headOf is the head of a 200 reply without header lines, as
// http.put_head writes it (TestPutHeadBytes checks every part).
func headOf(code int64, _ string, length, conn int64) string {
	return fmt.Sprintf("HTTP/1.1 %d OK\r\nContent-Length: %d\r\n%s\r\n", code, length, []string{"", "Connection: close\r\n", "Connection: keep-alive\r\n"}[conn])
}

const putHeadSrc = `.abi 1.8
; put writes the head of code with n bytes of header lines into a bytes
; object of size at at, and returns http.put_head's result.
.func put(size:i64, at:i64, code:i64, n:i64, length:i64, conn:i64) -> i64
  .local out:ref, hdrs:ref, r:i64
  bnew    out, size
  bnew    hdrs, n
  intr    r, http.put_head, out, at, code, hdrs, length, conn
  ret     r
.end
`

// TestPutHeadRuns: http.put_head runs in the VM loop (no request to the
// scheduler), charges one reduction per 64 bytes it writes beside its
// base cost, and traps on an offset outside the object and on a length
// or conn it does not define.
func TestPutHeadRuns(t *testing.T) {
	p, err := jasm.Assemble("put.jasm", []byte(putHeadSrc))
	require.NoError(t, err)
	require.NoError(t, vmloop.Verify(p, nil))
	run := func(size, at, code, n, length, conn int64) *vmloop.Exec {
		e, err := vmloop.NewExec(p, p.FuncIndex("put"), []vmloop.Value{vmloop.I64(size), vmloop.I64(at), vmloop.I64(code), vmloop.I64(n), vmloop.I64(length), vmloop.I64(conn)}, vmloop.DefaultLimits, 3)
		require.NoError(t, err)
		sig := e.Run(1_000_000)
		require.NotEqual(t, vmloop.SigIntrinsic, sig, "http.put_head left the VM loop as a request")
		return e
	}
	e := run(100, 10, 200, 0, 13, 2)
	require.Equal(t, int64(10+len(headOf(200, "", 13, 2))), e.Result().Int())
	base := e.Reductions()
	e = run(64*50, 0, 200, 64*40, 13, 2)
	require.Equal(t, int64(64*40+len(headOf(200, "", 13, 2))), e.Result().Int())
	require.GreaterOrEqual(t, e.Reductions()-base, uint64(40), "charged by the bytes written")
	require.Equal(t, int64(-1), run(20, 0, 200, 0, 13, 2).Result().Int(), "no room")

	for _, c := range []struct {
		size, at, length, conn int64
		msg                    string
	}{
		{10, 11, 0, 0, "http.put_head: at 11 in length 10"},
		{10, -1, 0, 0, "http.put_head: at -1 in length 10"},
		{10, 0, -2, 0, "http.put_head: length -2, conn 0"},
		{10, 0, 0, 3, "http.put_head: length 0, conn 3"},
		{10, 0, 0, -1, "http.put_head: length 0, conn -1"},
	} {
		e := run(c.size, c.at, 200, 0, c.length, c.conn)
		require.Equal(t, vmloop.TrapBounds, e.Trap().Code, c.msg)
		require.Contains(t, e.Trap().Msg, c.msg)
	}
}
