package main

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestServe checks resp-go's replies over loopback: the same cases as
// examples/resp_ping.jasm, a pipeline and a protocol error.
func TestServe(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	long := strings.Repeat("x", 300)
	for _, tc := range []struct{ req, want string }{
		{"PING\r\n", "+PONG\r\n"},
		{"ping\n", "+PONG\r\n"},
		{"*1\r\n$4\r\nPiNg\r\n", "+PONG\r\n"},
		{"PING hello\r\n", "$5\r\nhello\r\n"},
		{"*2\r\n$4\r\nPING\r\n$3\r\na\r\n\r\n", "$3\r\na\r\n\r\n"},
		{"PING a b\r\n", "-ERR wrong number of arguments for 'ping' command\r\n"},
		{"\r\n*0\r\nGET k\r\n", "-ERR unknown command 'GET', with args beginning with: 'k' \r\n"},
		{"X " + long + "\r\n", "-ERR unknown command 'X', with args beginning with: '" + long[:128] + "' \r\n"},
		{strings.Repeat("PING\r\n*1\r\n$4\r\nPING\r\n", 100), strings.Repeat("+PONG\r\n", 200)},
		{"*1\r\nPING\r\n", "-ERR Protocol error: expected '$', got 'P'\r\n"},
	} {
		_, err := c.Write([]byte(tc.req))
		require.NoError(t, err)
		got := make([]byte, len(tc.want))
		_, err = io.ReadFull(c, got)
		require.NoError(t, err, "%q", tc.req)
		if string(got) != tc.want {
			t.Fatalf("%q: got %q, want %q", tc.req, got, tc.want)
		}
	}
	if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("after a protocol error: %d, %v; want EOF", n, err)
	}
}
