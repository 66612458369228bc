package examples_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bench"
	"github.com/jadevm/jade/internal/testkit"
)

// The HTTP example's tests: Go's net/http client for the routes, methods
// and keep-alive, raw connections for pipelining, split requests, HTTP/1.0,
// bodies, the refusals and the idle timeout; on both backends and 1, 2 and
// 4 workers. The idle timeout is 300 ms here (the program's second
// argument).

func TestHTTP(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		testkit.Workers(t, []int{1, 2, 4}, func(t *testing.T, workers int) {
			s := startServer(t, "http.jasm", workers, "300")
			t.Run("client", func(t *testing.T) { httpClientRoutes(t, s.addr) })
			t.Run("raw", func(t *testing.T) { httpRaw(t, s.addr) })
		})
	})
}

// httpClientRoutes drives the routes with net/http's client: one
// keep-alive connection serves every request.
func httpClientRoutes(t *testing.T, addr string) {
	tr := &http.Transport{MaxIdleConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var reused int
	do := func(method, path, body string) (int, string, http.Header) {
		t.Helper()
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, "http://"+addr+path, rd)
		require.NoError(t, err)
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(i httptrace.GotConnInfo) {
				if i.Reused {
					reused++
				}
			}}))
		resp, err := cl.Do(req)
		require.NoError(t, err, "%s %s", method, path)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b), resp.Header
	}
	code, body, h := do("GET", "/", "")
	require.Equal(t, 200, code)
	require.Equal(t, bench.HelloBody, body)
	require.Equal(t, "text/plain", h.Get("Content-Type"))
	code, body, _ = do("GET", "/work?ms=5", "")
	require.Equal(t, 200, code)
	require.Equal(t, "worked 5 ms\n", body)
	code, body, h = do("HEAD", "/", "")
	require.Equal(t, 200, code)
	require.Empty(t, body)
	require.Equal(t, "13", h.Get("Content-Length"))
	code, _, h = do("POST", "/", "a body to read past")
	require.Equal(t, 405, code)
	require.Equal(t, "GET, HEAD", h.Get("Allow"))
	code, _, _ = do("PUT", "/nope", strings.Repeat("b", 20000)) // longer than the buffer
	require.Equal(t, 404, code)
	reusedBefore := reused
	code, body, _ = do("GET", "/", "")
	require.Equal(t, 200, code)
	require.Equal(t, bench.HelloBody, body)
	require.Equal(t, reusedBefore+1, reused, "the connection is kept after a 404 with a body")
	require.Equal(t, 5, reused, "one connection served all six requests")
	code, _, _ = do("GET", "/work?ms=abc", "") // a 400 closes the connection
	require.Equal(t, 400, code)
}

// httpRaw sends requests on raw connections.
func httpRaw(t *testing.T, addr string) {
	hello := "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, World!"
	t.Run("pipelined", func(t *testing.T) {
		c, r := rawConn(t, addr)
		req := "GET / HTTP/1.1\r\nHost: a\r\n\r\n"
		write(t, c, req+"GET /work?ms=1 HTTP/1.1\r\nHost: a\r\n\r\n"+req+req)
		for i, want := range []string{bench.HelloBody, "worked 1 ms\n", bench.HelloBody, bench.HelloBody} {
			b, err := bench.ReadHTTPResponse(r, 200)
			require.NoError(t, err, "response %d", i)
			require.Equal(t, want, string(b))
		}
	})
	t.Run("split", func(t *testing.T) {
		c, r := rawConn(t, addr)
		req := "GET / HTTP/1.1\r\nHost: a\r\nUser-Agent: x\r\n\r\n"
		for i := range req {
			write(t, c, req[i:i+1])
			time.Sleep(100 * time.Microsecond)
		}
		b, err := bench.ReadHTTPResponse(r, 200)
		require.NoError(t, err)
		require.Equal(t, bench.HelloBody, string(b))
	})
	t.Run("connection close", func(t *testing.T) {
		c, _ := rawConn(t, addr)
		write(t, c, "GET / HTTP/1.1\r\nHost: a\r\nconnection: CLOSE\r\n\r\n")
		require.Equal(t, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\nConnection: close\r\n\r\nHello, World!", readAll(t, c))
	})
	t.Run("http/1.0", func(t *testing.T) {
		c, _ := rawConn(t, addr)
		write(t, c, "GET / HTTP/1.0\r\n\r\n")
		require.Equal(t, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\nConnection: close\r\n\r\nHello, World!", readAll(t, c))
		c, r := rawConn(t, addr)
		write(t, c, "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET / HTTP/1.0\r\n\r\n")
		head, err := r.ReadString('!')
		require.NoError(t, err)
		require.Equal(t, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\nConnection: keep-alive\r\n\r\nHello, World!", head)
		require.Contains(t, readAll(t, r), "Connection: close")
	})
	t.Run("body across reads", func(t *testing.T) {
		c, r := rawConn(t, addr)
		body := strings.Repeat("z", 30000)
		write(t, c, "POST /nope HTTP/1.1\r\nHost: a\r\nContent-Length: 30000\r\n\r\n"+body+"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
		_, err := bench.ReadHTTPResponse(r, 404)
		require.NoError(t, err)
		b, err := bench.ReadHTTPResponse(r, 200)
		require.NoError(t, err, "the request after the body")
		require.Equal(t, bench.HelloBody, string(b))
	})
	refusals := []struct{ name, req, status string }{
		{"malformed request line", "GARBAGE\r\n\r\n", "400 Bad Request"},
		{"bad version", "GET / HTTP/2.0\r\n\r\n", "400 Bad Request"},
		{"no colon", "GET / HTTP/1.1\r\nHost a\r\n\r\n", "400 Bad Request"},
		{"space before colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", "400 Bad Request"},
		{"bad content-length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1x\r\n\r\n", "400 Bad Request"},
		{"signed content-length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\n", "400 Bad Request"},
		{"headers over 8 KiB", "GET / HTTP/1.1\r\nHost: a\r\nX: " + strings.Repeat("h", 9000) + "\r\n\r\n", "431 Request Header Fields Too Large"},
		{"unknown method", "BREW / HTTP/1.1\r\nHost: a\r\n\r\n", "501 Not Implemented"},
		{"chunked", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", "501 Not Implemented"},
		{"body too large", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2000000\r\n\r\n", "413 Content Too Large"},
	}
	for _, rf := range refusals {
		t.Run(rf.name, func(t *testing.T) {
			c, _ := rawConn(t, addr)
			// Unread input after the request: the reply must still arrive
			// whole, ended by a FIN, not lost to a reset.
			write(t, c, rf.req+strings.Repeat("u", 3000))
			got := readAll(t, c)
			require.True(t, strings.HasPrefix(got, "HTTP/1.1 "+rf.status+"\r\n"), "reply %q", got)
			require.Contains(t, got, "Connection: close\r\n\r\n")
		})
	}
	t.Run("after a good response", func(t *testing.T) {
		c, r := rawConn(t, addr)
		write(t, c, "GET / HTTP/1.1\r\nHost: a\r\n\r\nBAD\r\n\r\n")
		b, err := bench.ReadHTTPResponse(r, 200)
		require.NoError(t, err)
		require.Equal(t, bench.HelloBody, string(b))
		require.True(t, strings.HasPrefix(readAll(t, r), "HTTP/1.1 400 "))
	})
	t.Run("idle timeout", func(t *testing.T) {
		c, r := rawConn(t, addr)
		t0 := time.Now() // before the wait for the second request began
		write(t, c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
		require.Equal(t, hello, readN(t, r, len(hello)))
		write(t, c, "GET / HT") // a partial request, then nothing
		require.Empty(t, readAll(t, r), "closed without a reply")
		require.GreaterOrEqual(t, time.Since(t0), 250*time.Millisecond)
	})
}

func rawConn(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c, bufio.NewReader(c)
}

func write(t *testing.T, c net.Conn, s string) {
	t.Helper()
	_, err := io.WriteString(c, s)
	require.NoError(t, err)
}

// readAll reads to the end of stream, which must be a FIN: a reset fails.
func readAll(t *testing.T, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	require.NoError(t, err, "after %q", b)
	return string(b)
}

func readN(t *testing.T, r io.Reader, n int) string {
	t.Helper()
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	require.NoError(t, err)
	return string(b)
}
