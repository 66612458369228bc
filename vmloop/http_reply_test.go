package vmloop

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// wantHead is http.put_head's head, spelled out as docs/ISA.md says it.
func wantHead(code int64, hdrs string, length, conn int64) string {
	reasons := map[int64]string{200: "OK", 201: "Created", 204: "No Content", 400: "Bad Request",
		404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout", 411: "Length Required",
		413: "Content Too Large", 414: "URI Too Long", 431: "Request Header Fields Too Large",
		500: "Internal Server Error", 501: "Not Implemented", 503: "Service Unavailable", 507: "Insufficient Storage"}
	s := fmt.Sprintf("HTTP/1.1 %d %s\r\n", code, reasons[code]) + hdrs
	if length >= 0 {
		s += fmt.Sprintf("Content-Length: %d\r\n", length)
	}
	return s + []string{"", "Connection: close\r\n", "Connection: keep-alive\r\n"}[conn] + "\r\n"
}

// TestPutHeadBytes: every part of the head, at an offset, and the exact
// fit: one byte less and nothing is written.
func TestPutHeadBytes(t *testing.T) {
	codes := []int64{100, 200, 201, 204, 304, 400, 404, 405, 408, 411, 413, 414, 418, 431, 500, 501, 503, 507, 999, 0, -7, 1 << 62}
	hdrs := []string{"", "Content-Type: text/plain\r\n", "Allow: GET, HEAD\r\nX-A: b\r\n"}
	for _, code := range codes {
		for _, hd := range hdrs {
			for _, length := range []int64{-1, 0, 13, 1 << 40} {
				for conn := int64(0); conn < 3; conn++ {
					want := wantHead(code, hd, length, conn)
					for _, at := range []int64{0, 7} {
						out := bytes.Repeat([]byte{'#'}, int(at)+len(want))
						n := putHead(out, at, code, []byte(hd), length, conn)
						require.Equal(t, at+int64(len(want)), n, "code %d, hdrs %q, length %d, conn %d", code, hd, length, conn)
						require.Equal(t, want, string(out[at:]))
						require.Equal(t, strings.Repeat("#", int(at)), string(out[:at]), "nothing before at is written")

						short := bytes.Repeat([]byte{'#'}, int(at)+len(want)-1)
						require.Equal(t, int64(-1), putHead(short, at, code, []byte(hd), length, conn))
						require.Equal(t, strings.Repeat("#", len(short)), string(short), "a head that does not fit writes nothing")
					}
				}
			}
		}
	}
	big := bytes.Repeat([]byte("X-Long: 0123456789abcdef\r\n"), httpReplyMax/26)
	out := make([]byte, 2*httpReplyMax)
	require.Equal(t, int64(-1), putHead(out, 0, 200, big, 0, 0), "a head over httpReplyMax is refused whatever the room")
	require.Equal(t, make([]byte, 2*httpReplyMax), out)
}
