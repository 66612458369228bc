package std_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/native"
	"github.com/jadevm/jade/vmloop"
	"github.com/jadevm/jade/vmloop/jasm"
)

// http.parse_head against the bytecode parser it replaced in std/http
// (testdata/http_head_ref.jasm), through testdata/parse_diff.jasm's
// agree: the same heads, well-formed and malformed, read at once or in
// two reads split anywhere, with the same field limits, must give the
// same result (the offset past the head, -1 for more, or the refusal's
// status) and the same request fields.

// parseHeads are heads std/http accepts and refuses (std/http_test.jasm's
// and more), the seeds of FuzzParseHeadAgrees.
var parseHeads = []string{
	"GET /k/a%20b HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\n\r\n",
	"DELETE /x HTTP/1.1\r\nhost: x\r\nconnection: Close\r\n\r\n",
	"GET / HTTP/1.0\r\n\r\n",
	"HEAD / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET / HTTP/1.0\r\n\r\n",
	"\r\n\r\nOPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n",
	"PUT /k/a HTTP/1.1\r\nHost: x\r\nContent-Length: 12\r\n\r\nhello, world",
	"PUT /k/a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\ncontent-length:  3 \r\n\r\n",
	"PUT /k/a HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 36\r\n\r\n",
	"PUT /k/a HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\n",
	"PUT /k/a HTTP/1.1\r\nHost: x\r\nContent-Length: 3x\r\n\r\n",
	"PUT /k/a HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n",
	"PUT /k/a HTTP/1.1\r\nHost: x\r\nContent-Length: 9223372036854775807\r\n\r\n",
	"PUT /k/a HTTP/1.1\r\nHost: x\r\nContent-Length:\t\r\n\r\n",
	"PUT /k/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
	"PATCH / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nHost : x\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: x\r\nX: a\rb\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: x\r\nX: a\x00b\r\n\r\n",
	"GET /\r HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET / HTTP/1.1\r\nX: a\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nHOST: a\r\n\r\n",
	"GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n",
	"FETCH / HTTP/1.1\r\nHost: a\r\n\r\n",
	"get / HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET / HTTP/1.2\r\nHost: a\r\n\r\n",
	"GET  HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /a b HTTP/1.1\r\nHost: a\r\n\r\n",
	" / HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET / HTTP/1.1\r\nHost : a\r\n\r\n",
	"GET / HTTP/1.1\r\n\tHost: a\r\n\r\n",
	"GET / HTTP/1.1\r\nHo\tst: a\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\n\tX: b\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",
	"GET / HTTP/1.1\r\n: a\r\nHost: a\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\n\r\n",
	"GET / HTTP/1.1\nHost: a",
	"\nGET / HTTP/1.1\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\n\n\r\n",
	"\r\n\r",
	"\r\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n",
	"GET / HTTP/1.0\r\nConnection: close\r\nConnection: KEEP-ALIVE\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, upgrade\r\n\r\n",
	"CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\n" + strings.Repeat("X-Y: z\r\n", 120) + "\r\n",
}

// parseDiff assembles testdata/parse_diff.jasm.
func parseDiff(t testing.TB) *vmloop.Program {
	p, err := jasm.AssembleFile("testdata/parse_diff.jasm", jasm.LinkOptions{NoStd: true})
	require.NoError(t, err)
	require.NoError(t, vmloop.Verify(p, nil))
	return p
}

// agree runs agree on head, split at cut, with a field limit of fields,
// on the Go or the C loop: 0, or the number of the disagreement.
func agree(t testing.TB, p *vmloop.Program, nat bool, head string, cut, fields int) int64 {
	e, err := vmloop.NewExec(p, p.FuncIndex("agree"), []vmloop.Value{vmloop.Bytes([]byte(head)), vmloop.I64(int64(cut)), vmloop.I64(int64(len(head))), vmloop.I64(int64(fields))}, vmloop.DefaultLimits, 1)
	require.NoError(t, err)
	defer e.Free()
	e.SetNative(nat)
	sig := vmloop.SigPreempted
	for i := 0; i < 100000 && sig == vmloop.SigPreempted; i++ {
		sig = e.Run(10000)
	}
	require.Equal(t, vmloop.SigCompleted, sig, "%q: %v (trap %v)", head, sig, e.Trap())
	return e.Result().Int()
}

// TestParseHeadAgrees: every seed head, split at every byte, with the
// default field limit and two small ones, on both loops.
func TestParseHeadAgrees(t *testing.T) {
	p := parseDiff(t)
	loops := []bool{false}
	if native.Available() {
		loops = append(loops, true)
	}
	for _, nat := range loops {
		for _, head := range parseHeads {
			for cut := 0; cut <= len(head); cut++ {
				for _, fields := range []int{100, 2, 0} {
					require.Zero(t, agree(t, p, nat, head, cut, fields), "%q cut at %d, %d fields (native %v)", head, cut, fields, nat)
				}
			}
		}
	}
}

// FuzzParseHeadAgrees: any bytes, split anywhere, with any small field
// limit (the buffer std/http reads into is 8 KiB; longer inputs are
// cut there).
func FuzzParseHeadAgrees(f *testing.F) {
	for i, h := range parseHeads {
		f.Add([]byte(h), uint16(i*7), uint8(100))
	}
	p := parseDiff(f)
	f.Fuzz(func(t *testing.T, b []byte, cut uint16, fields uint8) {
		if len(b) > 8192 {
			b = b[:8192]
		}
		require.Zero(t, agree(t, p, false, string(b), int(cut)%(len(b)+1), int(fields)), "%q cut at %d, %d fields", b, int(cut)%(len(b)+1), fields)
	})
}
