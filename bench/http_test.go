package bench

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// httpServers are the servers of the HTTP scenarios: the two Go ones
// and examples/http.jasm on one worker.
var httpServers = []struct {
	name  string
	start func() (*EchoServer, error)
}{{"nethttp", StartGoHTTP}, {"raw", StartRawHTTP}, {"jade", func() (*EchoServer, error) { return StartJadeHTTP(1) }}}

// TestHTTPServers: the servers answer the routes, keep the
// connection alive and answer pipelined requests in order.
func TestHTTPServers(t *testing.T) {
	for _, s := range httpServers {
		t.Run(s.name, func(t *testing.T) {
			srv, err := s.start()
			require.NoError(t, err)
			defer srv.Close()
			c, err := net.Dial("tcp", srv.Addr)
			require.NoError(t, err)
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			r := bufio.NewReader(c)
			_, err = io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /work?ms=3 HTTP/1.1\r\nHost: x\r\n\r\n")
			require.NoError(t, err)
			body, err := ReadHTTPResponse(r, 200)
			require.NoError(t, err)
			require.Equal(t, HelloBody, string(body))
			body, err = ReadHTTPResponse(r, 200)
			require.NoError(t, err)
			require.Equal(t, "worked 3 ms\n", string(body))
			_, err = io.WriteString(c, "GET /work?ms=x HTTP/1.1\r\nHost: x\r\n\r\n")
			require.NoError(t, err)
			_, err = ReadHTTPResponse(r, 400)
			require.NoError(t, err)
		})
	}
}

// TestHTTPMixedLoad: a short mixed run against each server measures
// light requests on schedule and completes heavy ones, without errors.
func TestHTTPMixedLoad(t *testing.T) {
	for _, s := range httpServers {
		t.Run(s.name, func(t *testing.T) {
			srv, err := s.start()
			require.NoError(t, err)
			defer srv.Close()
			m, err := RunHTTPMixed(srv.Addr, 500, 2, 5, 50*time.Millisecond, 300*time.Millisecond)
			require.NoError(t, err)
			require.Empty(t, m.FirstError)
			require.Zero(t, m.LightErrors)
			require.Zero(t, m.HeavyErrors)
			require.InDelta(t, 150, m.LightDone, 5, "500/s for 0.3 s")
			require.Positive(t, m.HeavyDone)
			require.Positive(t, m.Light.P50)
		})
	}
}
