package vmloop

import "testing"

// The benchmark's heads: wrk's GET, a three-line GET and a POST with a
// Content-Length and eight fields.
const (
	benchHeadWrk  = "GET / HTTP/1.1\r\nHost: localhost:8080\r\n\r\n"
	benchHead3    = "GET / HTTP/1.1\r\nHost: localhost\r\nUser-Agent: hs\r\n\r\n"
	benchHeadPost = "POST /api/v1/items?id=42 HTTP/1.1\r\nHost: api.example.com\r\n" +
		"User-Agent: Mozilla/5.0 (X11; Linux x86_64) bench/1.0\r\nAccept: application/json\r\n" +
		"Accept-Encoding: gzip, deflate\r\nContent-Type: application/json\r\nContent-Length: 27\r\n" +
		"Connection: keep-alive\r\nX-Request-Id: 7f3c2a9e-1b4d-4e8a-9c6f-0d2e5b8a1c3f\r\n\r\n" +
		`{"name":"widget","qty":3}` + "\r\n"
)

// BenchmarkParseHead: parseHead and its reference (ref/...) on the
// benchmark's heads, read whole.
func BenchmarkParseHead(b *testing.B) {
	for _, p := range []struct {
		name  string
		parse func([]byte, int64, int64, int64, int64, *[httpOutLen]int64) (int64, int64)
	}{{"new", parseHead}, {"ref", refParseHead}} {
		for _, h := range []struct{ name, head string }{{"wrk", benchHeadWrk}, {"get3", benchHead3}, {"post8", benchHeadPost}} {
			b.Run(p.name+"/"+h.name, func(b *testing.B) {
				buf := []byte(h.head)
				var out [httpOutLen]int64
				for b.Loop() {
					if code, _ := p.parse(buf, 0, 0, int64(len(buf)), 100, &out); code < 0 {
						b.Fatalf("%q: %d", h.head, code)
					}
				}
			})
		}
	}
}
