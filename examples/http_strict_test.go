package examples_test

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bench"
	"github.com/jadevm/jade/internal/testkit"
)

// The HTTP example's framing rules (RFC 9112) and its deadlines against
// slow clients, on both backends: http.jasm is what adopters copy. The
// idle timeout is 300 ms (the program's second argument).

func TestHTTPStrict(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		testkit.Workers(t, []int{1, 2}, func(t *testing.T, workers int) {
			s := startServer(t, "http.jasm", workers, "300")
			t.Run("framing", func(t *testing.T) { httpFraming(t, s.addr) })
			t.Run("deadlines", func(t *testing.T) { httpDeadlines(t, s.addr) })
		})
	})
}

// httpFraming: the requests a server must refuse with 400 (RFC 9112
// §3.2, §6.3, RFC 9110 §5.5) and the ones it must accept.
func httpFraming(t *testing.T, addr string) {
	refused := []struct{ name, req string }{
		// §6.3: the request-smuggling shape, CL: 36 then CL: 0; the body
		// would otherwise be served as a second request.
		{"two content-lengths", "POST /nope HTTP/1.1\r\nHost: a\r\nContent-Length: 36\r\nContent-Length: 0\r\n\r\nGET /work?ms=1 HTTP/1.1\r\nHost: a\r\n\r\n"},
		{"two content-lengths, zero first", "POST /nope HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nContent-Length: 36\r\n\r\nGET /work?ms=1 HTTP/1.1\r\nHost: a\r\n\r\n"},
		{"bare CR in a value", "GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n"},
		{"bare CR in the request line", "GET /\r HTTP/1.1\r\nHost: a\r\n\r\n"},
		{"NUL in a value", "GET / HTTP/1.1\r\nHost: a\r\nX: a\x00b\r\n\r\n"},
		{"no host", "GET / HTTP/1.1\r\nX: a\r\n\r\n"},
		{"two hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"},
		{"two hosts, HTTP/1.0", "GET / HTTP/1.0\r\nHost: a\r\nhost: a\r\n\r\n"},
		{"LF only", "GET / HTTP/1.1\nHost: a\n\n"},
		{"bare LF in a header line", "GET / HTTP/1.1\r\nHost: a\nX: b\r\n\r\n"},
		{"bare LF ending the request line", "GET / HTTP/1.1\nHost: a\r\n\r\n"},
		{"bare LF before the blank line", "GET / HTTP/1.1\r\nHost: a\n\r\n"},
	}
	for _, rf := range refused {
		t.Run(rf.name, func(t *testing.T) {
			c, _ := rawConn(t, addr)
			write(t, c, rf.req)
			got := readAll(t, c)
			require.Equal(t, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", got, "the only reply")
		})
	}
	accepted := []struct{ name, req string }{
		{"a leading empty line", "\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n"},
		{"leading empty lines", "\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n"},
		{"an empty line between requests", "GET / HTTP/1.1\r\nHost: a\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n"},
		{"HTTP/1.0 without host", "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"},
		{"the same content-length twice", "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\ncontent-length: 3\r\n\r\nabc"},
		{"tab in a value", "GET / HTTP/1.1\r\nHost: a\r\nX: a\tb\r\n\r\n"},
	}
	for _, ac := range accepted {
		t.Run(ac.name, func(t *testing.T) {
			c, r := rawConn(t, addr)
			write(t, c, ac.req)
			for range strings.Count(ac.req, "GET /") {
				b, err := bench.ReadHTTPResponse(r, 200)
				require.NoError(t, err)
				require.Equal(t, bench.HelloBody, string(b))
			}
		})
	}
}

// httpDeadlines: a request head must arrive whole within the idle
// timeout of the wait for it, however its bytes trickle in, and the
// linger after a refusal ends within its second whatever the client
// sends. Each client trickles for up to 5 s; the server must have closed
// the connection long before (3 s is ten times the deadline).
func httpDeadlines(t *testing.T, addr string) {
	const limit = 3 * time.Second
	t.Run("trickled head", func(t *testing.T) {
		var wg sync.WaitGroup
		const clients = 20
		took := make([]time.Duration, clients)
		for i := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				took[i] = trickle(t, addr, "GET / HTTP/1.1\r\nHost: a\r\nX: ", 50*time.Millisecond)
			}()
		}
		wg.Wait()
		t.Logf("the server closed the trickled connections after %v", took)
		for i, d := range took {
			require.Less(t, d, limit, "client %d: the connection stayed open %v", i, d)
		}
	})
	t.Run("trickle after a 431", func(t *testing.T) {
		d := trickle(t, addr, "GET / HTTP/1.1\r\nHost: a\r\nX: "+strings.Repeat("h", 9000)+"\r\n\r\n", 100*time.Millisecond)
		t.Logf("the server closed the connection %v after the 431's request", d)
		require.Less(t, d, limit, "the linger after a 431 stayed open %v", d)
	})
}

// trickle sends head, then one byte every gap for up to 5 s, and returns
// how long after head the server closed the connection (5 s when it did
// not): when a write fails, the server's close having answered the
// write before it with a reset. A FIN alone (a half-close, then the
// linger's reads) does not end it. What the server replies is dropped.
func trickle(t *testing.T, addr, head string, gap time.Duration) time.Duration {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Error(err)
		return 0
	}
	defer c.Close()
	t0 := time.Now()
	go func() {
		c.SetReadDeadline(t0.Add(10 * time.Second))
		io.Copy(io.Discard, c)
	}()
	if _, err := io.WriteString(c, head); err != nil {
		return time.Since(t0)
	}
	for time.Since(t0) < 5*time.Second {
		time.Sleep(gap)
		if _, err := c.Write([]byte{'x'}); err != nil {
			return time.Since(t0)
		}
	}
	return 5 * time.Second
}
