package bench

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestKVStores: the two stores of the kv scenario answer the same: the
// preloaded keys, a PUT that replaces, a DELETE, and a key that is not
// there; and the wrk script names only preloaded keys.
func TestKVStores(t *testing.T) {
	for _, s := range []struct {
		name  string
		start func() (*EchoServer, error)
	}{{"nethttp-kv", StartGoKV}, {"jade-kv", func() (*EchoServer, error) { return StartJadeKV(1) }}} {
		t.Run(s.name, func(t *testing.T) {
			srv, err := s.start()
			require.NoError(t, err)
			defer srv.Close()
			require.NoError(t, KVPreload(srv.Addr, 10, 5))
			c, err := net.Dial("tcp", srv.Addr)
			require.NoError(t, err)
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			r := bufio.NewReader(c)
			get := func(key string, want int) string {
				_, err := io.WriteString(c, "GET /k/"+key+" HTTP/1.1\r\nHost: x\r\n\r\n")
				require.NoError(t, err)
				body, err := ReadHTTPResponse(r, want)
				require.NoError(t, err)
				return string(body)
			}
			noContent := func(req string) {
				_, err := io.WriteString(c, req)
				require.NoError(t, err)
				line, err := r.ReadString('\n')
				require.NoError(t, err)
				require.Equal(t, "HTTP/1.1 204 No Content\r\n", line)
				for line != "\r\n" {
					line, err = r.ReadString('\n')
					require.NoError(t, err)
					require.NotContains(t, strings.ToLower(line), "content-length")
				}
			}
			require.Equal(t, "vvvvv", get("key9", 200))
			noContent("PUT /k/key9 HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
			require.Equal(t, "abc", get("key9", 200))
			noContent("DELETE /k/key9 HTTP/1.1\r\nHost: x\r\n\r\n")
			require.Equal(t, "", get("key9", 404))
			require.Equal(t, "", get("key10", 404))
		})
	}
	script := KVWrkScript(10, 5)
	require.Contains(t, script, "local keys = 10\n")
	require.Contains(t, script, "math.random(keys) - 1") // key0 ... key9
}
