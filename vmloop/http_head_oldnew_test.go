package vmloop

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// oldNewHeads are the heads the parser is held to its reference on:
// those of this package's tests, those of std's TestParseHeadAgrees and
// the benchmark's.
var oldNewHeads = []string{
	"\r\n\r\nGET /a?b HTTP/1.1\r\nHost: x\r\nContent-Length:  12 \t\r\nX-A: 1\r\n\r\nbody",
	"HEAD / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n",
	"TRACE * HTTP/1.1\r\nhost: h\r\nCONNECTION: CLOSE\r\n\r\n",
	"GET / HTTP/1.0\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 9223372036854775807\r\ncontent-length: 9223372036854775807\r\n\r\n",
	"GET / HTTP/1.1\nHost: h\r\n\r\n",
	"\nGET / HTTP/1.1\r\nHost: h\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: h\rx\r\n\r\n",
	"GET /\x00 HTTP/1.1\r\nHost: h\r\n\r\n",
	"GET  / HTTP/1.1\r\nHost: h\r\n\r\n",
	" GET / HTTP/1.1\r\nHost: h\r\n\r\n",
	"GET / HTTP/1.2\r\nHost: h\r\n\r\n",
	"GET / http/1.1\r\nHost: h\r\n\r\n",
	"GET /a b HTTP/1.1\r\nHost: h\r\n\r\n",
	"GET / HTTP/1.1\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
	"GET / HTTP/1.0\r\nHost: a\r\nHOST: b\r\n\r\n",
	"GET / HTTP/1.1\r\nHost : h\r\n\r\n",
	"GET / HTTP/1.1\r\n\tHost: h\r\n\r\n",
	"GET / HTTP/1.1\r\nHost h\r\n\r\n",
	"GET / HTTP/1.1\r\n: h\r\nHost: h\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +1\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1 2\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: \r\n\r\n",
	"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 9223372036854775808\r\n\r\n",
	"get / HTTP/1.1\r\nHost: h\r\n\r\n",
	"BREW / HTTP/1.1\r\nHost: h\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n",
	"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
	"GET / HTTP/1.1\r\n" + strings.Repeat("A: b\r\n", 100) + "Host: h\r\n\r\n",
	"\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n",
	"GET / HTTP/1.1\nHo",
	"GET /x HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc",
	// std's TestParseHeadAgrees
	"GET /k/a%20b HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\n\r\n",
	"DELETE /x HTTP/1.1\r\nhost: x\r\nconnection: Close\r\n\r\n",
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
	"GET  HTTP/1.1\r\nHost: a\r\n\r\n",
	" / HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET / HTTP/1.1\r\nHo\tst: a\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\n\tX: b\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\n\r\n",
	"\nGET / HTTP/1.1\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\n\n\r\n",
	"\r\n\r",
	"\r\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n",
	"GET / HTTP/1.0\r\nConnection: close\r\nConnection: KEEP-ALIVE\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, upgrade\r\n\r\n",
	"CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\n" + strings.Repeat("X-Y: z\r\n", 120) + "\r\n",
	// the benchmark's
	benchHeadWrk, benchHead3, benchHeadPost,
}

// oldNewFields are the field limits the corpus is parsed with.
var oldNewFields = []int64{-1, 0, 1, 2, 3, 100}

// diffOldNew parses buf[start:end] from scan with a field limit of
// fields by parseHead and by its reference, and says how they differ in
// the code, the out array or the bytes looked at ("" when they do not).
func diffOldNew(buf []byte, start, scan, end, fields int64) string {
	var got, want [httpOutLen]int64
	for i := range got {
		got[i], want[i] = -7-int64(i), -7-int64(i)
	}
	code, looked := parseHead(buf, start, scan, end, fields, &got)
	wcode, wlooked := refParseHead(buf, start, scan, end, fields, &want)
	if code == wcode && looked == wlooked && got == want {
		return ""
	}
	return fmt.Sprintf("%q start %d scan %d end %d fields %d: code %d (want %d), looked %d (want %d), out %v (want %v)",
		buf, start, scan, end, fields, code, wcode, looked, wlooked, got, want)
}

// requireOldNew fails t when parseHead and its reference differ on buf
// read whole, and on buf read up to cut and then resumed as a caller
// would (from the out array of the first call).
func requireOldNew(t testing.TB, buf []byte, cut int, fields int64) {
	t.Helper()
	n := int64(len(buf))
	require.Empty(t, diffOldNew(buf, 0, 0, n, fields))
	require.Empty(t, diffOldNew(buf, 0, 0, int64(cut), fields))
	var out [httpOutLen]int64
	if code, _ := parseHead(buf, 0, 0, int64(cut), fields, &out); code == -1 {
		require.Empty(t, diffOldNew(buf, out[httpOutStart], out[httpOutScan], n, fields))
	}
}

// TestParseHeadOldNew: parseHead gives its reference's code, out array
// and bytes looked at on every head of the corpus split at every byte,
// with every field limit, and on 200,000 mutations of them (bytes
// inserted, replaced and deleted, the bytes a head is made of weighted
// up), read whole, split and resumed, and from any start and scan.
func TestParseHeadOldNew(t *testing.T) {
	for _, h := range oldNewHeads {
		for _, fields := range oldNewFields {
			for cut := 0; cut <= len(h); cut++ {
				requireOldNew(t, []byte(h), cut, fields)
			}
		}
	}
	rng := rand.New(rand.NewPCG(0x6a616465, 0x68656164))
	for range 200_000 {
		b := mutateHead(rng, []byte(oldNewHeads[rng.IntN(len(oldNewHeads))]))
		fields := oldNewFields[rng.IntN(len(oldNewFields))]
		requireOldNew(t, b, rng.IntN(len(b)+1), fields)
		end := int64(rng.IntN(len(b) + 1))
		start, scan := int64(rng.IntN(int(end)+1)), int64(rng.IntN(int(end)+1))
		require.Empty(t, diffOldNew(b, start, scan, end, fields))
	}
}

// TestParseHeadOldNewBounded: the same on heads longer than httpHeadMax,
// and on one whose end lies just inside or just past it.
func TestParseHeadOldNewBounded(t *testing.T) {
	line := "GET / HTTP/1.1\r\nHost: h\r\nX: "
	for _, b := range [][]byte{
		[]byte(line + strings.Repeat("a", 3*httpHeadMax) + "\r\n\r\n"),
		[]byte(strings.Repeat("\r\n", httpHeadMax)),
		[]byte(strings.Repeat("\r\n", httpHeadMax/2-1) + line + "\r\n\r\n"),
		[]byte(line + strings.Repeat("a", httpHeadMax-len(line)-4) + "\r\n\r\n"),
		[]byte(line + strings.Repeat("a", httpHeadMax-len(line)-3) + "\r\n\r\n"),
		[]byte(line + strings.Repeat("a", httpHeadMax) + "\n\r\n\r\n"),
	} {
		n := int64(len(b))
		for _, at := range [][3]int64{{0, 0, n}, {0, n / 2, n}, {2, 2, n}, {0, 0, httpHeadMax}, {0, 0, httpHeadMax + 1}, {0, httpHeadMax + 1, n}} {
			if at[2] <= n && at[1] <= at[2] {
				require.Empty(t, diffOldNew(b, at[0], at[1], at[2], 100))
			}
		}
	}
}

// headBytes are the bytes a mutation writes, the bytes that decide a
// head's parse listed many times over.
var headBytes = []byte("\r\r\r\r\n\n\n\n\x00\x00  \t\t::::HOSTCLENGTH-KAPVEIRD/1.0 0123456789\x7f\xff")

// mutateHead changes one to four bytes of h: inserted, replaced or
// deleted, weighted to headBytes.
func mutateHead(rng *rand.Rand, h []byte) []byte {
	b := append([]byte(nil), h...)
	for range 1 + rng.IntN(4) {
		c := byte(rng.IntN(256))
		if rng.IntN(4) != 0 {
			c = headBytes[rng.IntN(len(headBytes))]
		}
		i := rng.IntN(len(b) + 1)
		switch op := rng.IntN(3); {
		case op == 0 || i == len(b):
			b = append(b[:i], append([]byte{c}, b[i:]...)...)
		case op == 1:
			b[i] = c
		default:
			b = append(b[:i], b[i+1:]...)
		}
	}
	return b
}

// FuzzParseHeadOldNew: parseHead gives its reference's code, out array
// and bytes looked at on any bytes, from any start and scan to any end,
// with any small field limit.
func FuzzParseHeadOldNew(f *testing.F) {
	for i, h := range oldNewHeads {
		f.Add([]byte(h), uint16(0), uint16(0), uint16(len(h)), int8(i%5))
	}
	f.Fuzz(func(t *testing.T, b []byte, start, scan, end uint16, fields int8) {
		e := int64(end) % int64(len(b)+1)
		s, c := int64(start)%(e+1), int64(scan)%(e+1)
		if d := diffOldNew(b, s, c, e, int64(fields)); d != "" {
			t.Fatal(d)
		}
	})
}
