package std_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/vmloop"
)

// std/http over sockets, on both backends at 1 and 2 workers:
// testdata/serve.jasm (its routes are in its comment) with an idle
// timeout of 300 ms and a body limit of 64 KiB.

type httpServer struct {
	rt   *jade.Runtime
	addr string
}

func startHTTP(t *testing.T, workers int) *httpServer {
	t.Helper()
	src, err := os.ReadFile("testdata/serve.jasm")
	require.NoError(t, err)
	rt := testkit.ForcedRuntime(t, jade.Options{Workers: workers})
	p, err := rt.Load("serve.jasm", src)
	require.NoError(t, err)
	addr := testkit.FreeAddr(t)
	_, err = rt.Spawn(p, "main", vmloop.StrArray([]string{addr, "300", "65536"}))
	require.NoError(t, err)
	testkit.WaitFor(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, "the server does not accept")
	return &httpServer{rt: rt, addr: addr}
}

// waitConns waits until only main is live: every connection task ended.
func (s *httpServer) waitConns(t *testing.T) {
	t.Helper()
	testkit.WaitFor(t, func() bool { return hostbus.Scheduler(s.rt).LiveTasks() <= 1 },
		"connection tasks did not end")
}

func TestHTTPServer(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		testkit.Workers(t, []int{1, 2}, func(t *testing.T, workers int) {
			s := startHTTP(t, workers)
			t.Run("refused", func(t *testing.T) { httpRefused(t, s.addr) })
			t.Run("accepted", func(t *testing.T) { httpAccepted(t, s.addr) })
			t.Run("bodies", func(t *testing.T) { httpBodies(t, s.addr) })
			t.Run("deadlines", func(t *testing.T) { httpDeadlines(t, s) })
			s.waitConns(t)
		})
	})
}

func dial(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	return c, bufio.NewReader(c)
}

func send(t *testing.T, c net.Conn, s string) {
	t.Helper()
	_, err := io.WriteString(c, s)
	require.NoError(t, err)
}

// readAll reads to the end of stream, which must be a FIN, not a reset.
func readAll(t *testing.T, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	require.NoError(t, err, "after %q", b)
	return string(b)
}

const (
	hello = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nHello"
	last  = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\nlast"
	bad   = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
)

// httpRefused: what RFC 9112 and RFC 9110 make a server refuse, and the
// limits; each refusal comes after the replies to the requests before it
// and ends the connection with a FIN.
func httpRefused(t *testing.T, addr string) {
	refusal := func(code string) string {
		return "HTTP/1.1 " + code + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
	}
	cases := []struct{ name, req, want string }{
		{"two content-lengths", "PUT /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 36\r\nContent-Length: 0\r\n\r\n", bad},
		{"a signed content-length", "PUT /echo HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\nx", bad},
		{"bare CR in a value", "GET /hello HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n", bad},
		{"bare CR in the request line", "GET /hello\r HTTP/1.1\r\nHost: a\r\n\r\n", bad},
		{"NUL in a value", "GET /hello HTTP/1.1\r\nHost: a\r\nX: a\x00b\r\n\r\n", bad},
		{"no host", "GET /hello HTTP/1.1\r\nX: a\r\n\r\n", bad},
		{"two hosts", "GET /hello HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", bad},
		{"two hosts, HTTP/1.0", "GET /hello HTTP/1.0\r\nHost: a\r\nhost: a\r\n\r\n", bad},
		{"LF only", "GET /hello HTTP/1.1\nHost: a\n\n", bad},
		{"bare LF in a header line", "GET /hello HTTP/1.1\r\nHost: a\nX: b\r\n\r\n", bad},
		{"obs-fold", "GET /hello HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n", bad},
		{"HTTP/2.0", "GET /hello HTTP/2.0\r\nHost: a\r\n\r\n", bad},
		{"after a good one", "GET /hello HTTP/1.1\r\nHost: a\r\n\r\nGET /hello HTTP/1.1\r\n\r\n", hello + bad},
		{"by the program", "GET /hello HTTP/1.1\r\nHost: a\r\n\r\nGET /bad HTTP/1.1\r\nHost: a\r\n\r\nGET /hello HTTP/1.1\r\nHost: a\r\n\r\n", hello + bad},
		{"head over 8 KiB", "GET /hello HTTP/1.1\r\nHost: a\r\nX: " + strings.Repeat("x", 8200) + "\r\n\r\n", refusal("431 Request Header Fields Too Large")},
		{"101 fields", "GET /hello HTTP/1.1\r\n" + strings.Repeat("X: y\r\n", 100) + "Host: a\r\n\r\n", refusal("431 Request Header Fields Too Large")},
		{"chunked", "PUT /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n", refusal("501 Not Implemented")},
		{"unknown method", "BREW /hello HTTP/1.1\r\nHost: a\r\n\r\n", refusal("501 Not Implemented")},
		{"body over the limit", "PUT /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 65537\r\n\r\n", refusal("413 Content Too Large")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, r := dial(t, addr)
			send(t, c, tc.req)
			require.Equal(t, tc.want, readAll(t, r))
		})
	}
}

// httpAccepted: what a server must accept, and keep-alive by version.
func httpAccepted(t *testing.T, addr string) {
	cases := []struct{ name, req, want string }{
		{"leading empty lines", "\r\n\r\n\r\nGET /hello HTTP/1.1\r\nHost: a\r\n\r\nGET /last HTTP/1.1\r\nHost: a\r\n\r\n", hello + last},
		{"an empty line between requests", "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n\r\nGET /last HTTP/1.1\r\nHost: a\r\n\r\n", hello + last},
		{"the same content-length twice", "PUT /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\ncontent-length: 3\r\n\r\nabcGET /last HTTP/1.1\r\nHost: a\r\n\r\n",
			"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc" + last},
		{"tab and blanks around a value", "GET /hello HTTP/1.1\r\nHost: a\r\nX: \t a\tb \t\r\nConnection:  close \r\n\r\n",
			"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nHello"},
		{"HTTP/1.0 closes", "GET /hello HTTP/1.0\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nHello"},
		{"HTTP/1.0 keep-alive", "GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /last HTTP/1.1\r\nHost: a\r\n\r\n",
			"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: keep-alive\r\n\r\nHello" + last},
		{"HEAD", "HEAD /hello HTTP/1.1\r\nHost: a\r\n\r\nGET /last HTTP/1.1\r\nHost: a\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n" + last},
		{"a head larger than the reply buffer", "GET /hello HTTP/1.1\r\nHost: a\r\n\r\nGET /bighead HTTP/1.1\r\nHost: a\r\n\r\nGET /last HTTP/1.1\r\nHost: a\r\n\r\n",
			hello + "HTTP/1.1 200 OK\r\n" + strings.Repeat("X-Pad: 0123456789abcdef\r\n", 800) + "Content-Length: 5\r\n\r\nHello" + last},
		{"not found", "GET /nope HTTP/1.1\r\nHost: a\r\n\r\nGET /last HTTP/1.1\r\nHost: a\r\n\r\n", "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n" + last},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, r := dial(t, addr)
			send(t, c, tc.req)
			require.Equal(t, tc.want, readAll(t, r))
		})
	}
}

// httpBodies: a body split across reads, larger than the read buffer;
// bodies the program did not read are skipped; pipelined requests after
// bodies; requests split byte by byte.
func httpBodies(t *testing.T, addr string) {
	c, r := dial(t, addr)
	body := strings.Repeat("0123456789", 3000) // 30,000 bytes: past the 8 KiB buffer
	send(t, c, "PUT /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 30000\r\n\r\n"+body[:100])
	time.Sleep(20 * time.Millisecond)
	send(t, c, body[100:])
	b, err := io.ReadAll(io.LimitReader(r, int64(len("HTTP/1.1 200 OK\r\nContent-Length: 30000\r\n\r\n")+len(body))))
	require.NoError(t, err)
	require.Equal(t, "HTTP/1.1 200 OK\r\nContent-Length: 30000\r\n\r\n"+body, string(b))

	// Unread bodies (a 404 and a GET with a body), in the buffer and past it.
	send(t, c, "PUT /nope HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nabcde"+
		"GET /hello HTTP/1.1\r\nHost: a\r\nContent-Length: 20000\r\n\r\n"+strings.Repeat("y", 20000)+
		"GET /hello HTTP/1.1\r\nHost: a\r\n\r\n")
	want := "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n" + hello + hello
	got := make([]byte, len(want))
	_, err = io.ReadFull(r, got)
	require.NoError(t, err)
	require.Equal(t, want, string(got))

	// Byte by byte.
	req := "PUT /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhiGET /last HTTP/1.1\r\nHost: a\r\n\r\n"
	for i := range len(req) {
		send(t, c, req[i:i+1])
	}
	require.Equal(t, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"+last, readAll(t, r))
}

// httpDeadlines: a head must come whole within the idle timeout (300 ms)
// of the wait for it, however its bytes trickle in; a client that does
// not read its replies is dropped when a write waits that long.
func httpDeadlines(t *testing.T, s *httpServer) {
	t.Run("trickling head", func(t *testing.T) {
		c, r := dial(t, s.addr)
		head := "GET /hello HTTP/1.1\r\nHost: a\r\nX: " + strings.Repeat("y", 100) + "\r\n\r\n"
		t0 := time.Now()
		go func() {
			for i := range len(head) {
				if _, err := io.WriteString(c, head[i:i+1]); err != nil {
					return
				}
				time.Sleep(20 * time.Millisecond) // 2.7 s in all, a byte every 20 ms
			}
		}()
		b, _ := io.ReadAll(r) // a FIN, or a reset: the server closed with input unread
		require.Empty(t, string(b), "no reply")
		d := time.Since(t0)
		require.GreaterOrEqual(t, d, 250*time.Millisecond)
		require.Less(t, d, 2*time.Second, "closed at the head's deadline, not when it came whole")
	})
	t.Run("idle", func(t *testing.T) {
		c, r := dial(t, s.addr)
		send(t, c, "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n")
		got := make([]byte, len(hello))
		_, err := io.ReadFull(r, got)
		require.NoError(t, err)
		t0 := time.Now()
		require.Empty(t, readAll(t, r), "closed after the idle timeout")
		require.GreaterOrEqual(t, time.Since(t0), 250*time.Millisecond)
	})
	t.Run("a client that does not read", func(t *testing.T) {
		c, _ := dial(t, s.addr)
		require.NoError(t, c.(*net.TCPConn).SetReadBuffer(4096))
		go func() {
			for range 200 { // 200 MiB of replies asked for, none read
				if _, err := io.WriteString(c, "GET /big HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
					return
				}
			}
		}()
		s.waitConns(t) // its task ended: the write timed out
	})
}

// TestHTTPServerDrain: at a drain a request's reply is the last
// ("Connection: close"), even when its body comes after the drain began.
func TestHTTPServerDrain(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		s := startHTTP(t, 1)
		c, r := dial(t, s.addr)
		send(t, c, "PUT /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nh")
		time.Sleep(20 * time.Millisecond)
		closed := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			closed <- s.rt.Close(ctx)
		}()
		testkit.WaitFor(t, func() bool { // the drain has begun: the listener is closed
			d, err := net.Dial("tcp", s.addr)
			if err == nil {
				d.Close()
			}
			return err != nil
		}, "the drain does not close the listener")
		send(t, c, "i")
		require.Equal(t, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi", readAll(t, r))
		require.NoError(t, <-closed)
	})
}
