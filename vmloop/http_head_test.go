package vmloop

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHTTPRows: every http.* intrinsic of the central table has a row
// the VM loop runs, and no row names an intrinsic outside http.*.
func TestHTTPRows(t *testing.T) {
	for _, in := range centralTable {
		row, ok := httpRows[in.ID]
		if FamilyOf(in.ID) != FamHTTP {
			require.False(t, ok, "%s: an http row for an intrinsic outside http.*", in.Name)
			continue
		}
		require.True(t, ok, "%s: no http row (http_head.go)", in.Name)
		require.NotNil(t, row.run, "%s: a row without a run", in.Name)
		require.True(t, in.Family().InVM(), in.Name)
	}
}

// parsed runs parseHead on the whole of s, from 0, with a field limit of
// 100.
func parsed(s string) (int64, [httpOutLen]int64) {
	var out [httpOutLen]int64
	code, _ := parseHead([]byte(s), 0, 0, int64(len(s)), 100, &out)
	return code, out
}

// TestParseHeadFields: what a head that is accepted is parsed into.
func TestParseHeadFields(t *testing.T) {
	s := "\r\n\r\nGET /a?b HTTP/1.1\r\nHost: x\r\nContent-Length:  12 \t\r\nX-A: 1\r\n\r\nbody"
	code, out := parsed(s)
	require.Equal(t, int64(strings.Index(s, "body")), code)
	require.Equal(t, [httpOutLen]int64{4, code, 1, 8, 12, 1, 1, 12, 3}, out)

	code, out = parsed("HEAD / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")
	require.Positive(t, code)
	require.Equal(t, int64(2), out[httpOutMethod])
	require.Equal(t, int64(1), out[httpOutKeep], "HTTP/1.0 kept when asked")
	require.Equal(t, int64(0), out[httpOutV11])
	require.Equal(t, int64(-1), out[httpOutLength])
	require.Equal(t, int64(1), out[httpOutFields])

	_, out = parsed("TRACE * HTTP/1.1\r\nhost: h\r\nCONNECTION: CLOSE\r\n\r\n")
	require.Equal(t, int64(9), out[httpOutMethod])
	require.Equal(t, int64(0), out[httpOutKeep])

	_, out = parsed("GET / HTTP/1.0\r\n\r\n")
	require.Equal(t, int64(0), out[httpOutKeep], "HTTP/1.0 closes by default")
	_, out = parsed("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 9223372036854775807\r\ncontent-length: 9223372036854775807\r\n\r\n")
	require.Equal(t, int64(1<<63-1), out[httpOutLength], "the same length twice")
}

// TestParseHeadRefused: the statuses of std/http's refusals.
func TestParseHeadRefused(t *testing.T) {
	for _, c := range []struct {
		head string
		code int64
	}{
		{"GET / HTTP/1.1\nHost: h\r\n\r\n", -400},                           // a bare LF
		{"\nGET / HTTP/1.1\r\nHost: h\r\n\r\n", -400},                       // an LF first
		{"GET / HTTP/1.1\r\nHost: h\rx\r\n\r\n", -400},                      // a bare CR
		{"GET /\x00 HTTP/1.1\r\nHost: h\r\n\r\n", -400},                     // a NUL
		{"GET  / HTTP/1.1\r\nHost: h\r\n\r\n", -400},                        // an empty target
		{" GET / HTTP/1.1\r\nHost: h\r\n\r\n", -400},                        // an empty method
		{"GET / HTTP/1.2\r\nHost: h\r\n\r\n", -400},                         // another version
		{"GET / http/1.1\r\nHost: h\r\n\r\n", -400},                         // its case
		{"GET /a b HTTP/1.1\r\nHost: h\r\n\r\n", -400},                      // a space in the target
		{"GET / HTTP/1.1\r\n\r\n", -400},                                    // no Host
		{"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", -400},              // two
		{"GET / HTTP/1.0\r\nHost: a\r\nHOST: b\r\n\r\n", -400},              // two in HTTP/1.0
		{"GET / HTTP/1.1\r\nHost : h\r\n\r\n", -400},                        // a blank in the name
		{"GET / HTTP/1.1\r\n\tHost: h\r\n\r\n", -400},                       // obs-fold
		{"GET / HTTP/1.1\r\nHost h\r\n\r\n", -400},                          // no colon
		{"GET / HTTP/1.1\r\n: h\r\nHost: h\r\n\r\n", -400},                  // an empty name
		{"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +1\r\n\r\n", -400},  // a sign
		{"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1 2\r\n\r\n", -400}, // a blank inside
		{"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: \r\n\r\n", -400},    // empty
		{"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", -400},
		{"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 9223372036854775808\r\n\r\n", -400},
		{"get / HTTP/1.1\r\nHost: h\r\n\r\n", -501},  // the method's case
		{"BREW / HTTP/1.1\r\nHost: h\r\n\r\n", -501}, // unknown
		{"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n", -501},
		{"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", -501}, // before the missing Host
		{"GET / HTTP/1.1\r\n" + strings.Repeat("A: b\r\n", 100) + "Host: h\r\n\r\n", -431},
	} {
		code, _ := parsed(c.head)
		require.Equal(t, c.code, code, "%q", c.head)
	}
}

// TestParseHeadIncomplete: a head not all there asks for more, from
// where the search resumes, and a bare LF is seen before the end.
func TestParseHeadIncomplete(t *testing.T) {
	s := "\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n"
	code, out := parsed(s)
	require.Equal(t, int64(-1), code)
	require.Equal(t, int64(4), out[httpOutStart])
	require.Equal(t, int64(len(s)-3), out[httpOutScan])
	code, out = parsed("\r\n\r")
	require.Equal(t, int64(-1), code)
	require.Equal(t, [2]int64{2, 2}, [2]int64{out[httpOutStart], out[httpOutScan]})
	code, _ = parsed("GET / HTTP/1.1\nHo")
	require.Equal(t, int64(-400), code, "a bare LF refused before the end comes")

	// Resumed: the same as at once, whatever the split.
	full := "GET /x HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"
	want, wantOut := parsed(full)
	for cut := 0; cut <= len(full); cut++ {
		var out [httpOutLen]int64
		b := []byte(full)
		code, _ := parseHead(b, 0, 0, int64(cut), 100, &out)
		if code == -1 {
			code, _ = parseHead(b, out[httpOutStart], out[httpOutScan], int64(len(b)), 100, &out)
		}
		require.Equal(t, want, code, "cut %d", cut)
		require.Equal(t, wantOut, out, "cut %d", cut)
	}
}

// TestParseHeadBounded: one step looks at httpHeadMax bytes at most, and
// a longer head is refused with 431 (S-6).
func TestParseHeadBounded(t *testing.T) {
	big := []byte("GET / HTTP/1.1\r\nHost: h\r\nX: " + strings.Repeat("a", 3*httpHeadMax) + "\r\n\r\n")
	var out [httpOutLen]int64
	code, looked := parseHead(big, 0, 0, int64(len(big)), 100, &out)
	require.Equal(t, int64(-431), code)
	require.LessOrEqual(t, looked, int64(httpHeadMax))
	crlfs := []byte(strings.Repeat("\r\n", httpHeadMax))
	code, looked = parseHead(crlfs, 0, 0, int64(len(crlfs)), 100, &out)
	require.Equal(t, int64(-431), code)
	require.LessOrEqual(t, looked, int64(httpHeadMax))
}
