package std_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
	"github.com/jadevm/jade/vmloop/jasm"
)

// std/http's reply writer (http_reply.jasm), which copies its pieces in
// line, against the writer it replaced (testdata/http_reply_ref.jasm,
// a call per piece), through testdata/reply_diff.jasm's agree: the same
// state and the same reply must queue the same bytes and leave the
// connection's keep-alive the same. The cases stay in the reply buffer
// (no write: the state has no connection); the writes are the same code
// in both and std's TestHTTPServer runs them over sockets.

// TestReplyAgrees: every status class, header lines and bodies of 0 to
// 4 KiB, bytes already queued, GET and HEAD, HTTP/1.1 and 1.0, a
// keep-alive the request cleared, and the drain begun or not.
func TestReplyAgrees(t *testing.T) {
	p, err := jasm.AssembleFile("testdata/reply_diff.jasm", jasm.LinkOptions{NoStd: true})
	require.NoError(t, err)
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	require.NoError(t, rt.Verify(p))
	hdrs := []string{"", "Content-Type: text/plain\r\n", "Allow: GET, HEAD\r\nX-A: b\r\n", strings.Repeat("X-Long: 0123456789abcdef\r\n", 157)}
	bodies := []string{"", "Hello, World!", strings.Repeat("b", 4096)}
	codes := []int64{100, 101, 200, 201, 204, 304, 400, 404, 413, 418, 500, 507, 999}
	type pos struct{ from, to int }
	n := 0
	for _, code := range codes {
		for _, hd := range hdrs {
			for bi, body := range bodies {
				spans := []pos{{0, len(body)}}
				if bi > 0 {
					spans = append(spans, pos{1, len(body) - 1}, pos{len(body), len(body)})
				}
				for _, sp := range spans {
					for _, olen := range []int64{0, 5, 3800} {
						for _, method := range []int64{1, 2} {
							for _, keep := range []int64{1, 0} {
								for _, v11 := range []int64{1, 0} {
									for _, drain := range []int64{0, 1} {
										ctx, cancel := context.WithTimeout(context.Background(), testkit.Patience)
										o, err := rt.Run(ctx, p, "agree", vmloop.I64(code), vmloop.Bytes([]byte(hd)), vmloop.Bytes([]byte(body)),
											vmloop.I64(int64(sp.from)), vmloop.I64(int64(sp.to)), vmloop.I64(olen), vmloop.I64(method), vmloop.I64(keep), vmloop.I64(v11), vmloop.I64(drain))
										cancel()
										require.NoError(t, err)
										require.Equal(t, sched.Success, o.Kind, "%v", o)
										got := o.Value.Int()
										require.GreaterOrEqual(t, got, olen+int64(len(hd))+17,
											"code %d, hdrs %d bytes, body[%d:%d] of %d, olen %d, method %d, keep %d, 1.1 %d, drain %d",
											code, len(hd), sp.from, sp.to, len(body), olen, method, keep, v11, drain)
										n++
									}
								}
							}
						}
					}
				}
			}
		}
	}
	require.Positive(t, n)
}

// TestReplyBadSpan: a body span with to < from throws (catchable) and
// queues nothing.
func TestReplyBadSpan(t *testing.T) {
	p, err := jasm.AssembleFile("testdata/reply_diff.jasm", jasm.LinkOptions{NoStd: true})
	require.NoError(t, err)
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	require.NoError(t, rt.Verify(p))
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Patience)
	defer cancel()
	o, err := rt.Run(ctx, p, "bad_span")
	require.NoError(t, err)
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.Equal(t, int64(1), o.Value.Int())
}
