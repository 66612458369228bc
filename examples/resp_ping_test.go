package examples_test

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/testkit"
)

// TestRespPing drives resp_ping.jasm with inline, multibulk and argument
// PINGs, a 100-request pipeline in one write, every request split at every
// byte boundary, an unknown command, and malformed input.
func TestRespPing(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		before := countFDs()
		s := startServer(t, "resp_ping.jasm", 2)
		c := s.dial(t)
		defer c.Close()
		for _, rc := range []struct{ req, want string }{
			{"PING\r\n", pong},
			{"ping\n", pong},
			{multibulk("PING"), pong},
			{multibulk("pInG"), pong},
			{"PING hello\r\n", bulk("hello")},
			{multibulk("PING", "msg"), bulk("msg")},
			{multibulk("PING", strings.Repeat("z", 200_000)), bulk(strings.Repeat("z", 200_000))},
			{multibulk("PING", "a", "b"), wrongArgs},
			{"GET k\r\n", unknownReply("GET", "k")},
			{"\r\n*0\r\n", ""},
		} {
			require.NoError(t, roundTrip(c, []byte(rc.req), []byte(rc.want)), "%q", trunc(rc.req))
		}

		// 100 pipelined requests in one write, answered in order.
		var req, want strings.Builder
		for i := 0; i < 100; i++ {
			switch i % 3 {
			case 0:
				req.WriteString("PING\r\n")
				want.WriteString(pong)
			case 1:
				req.WriteString(multibulk("PING"))
				want.WriteString(pong)
			default:
				m := fmt.Sprintf("m%d", i)
				req.WriteString(multibulk("PING", m))
				want.WriteString(bulk(m))
			}
		}
		require.NoError(t, roundTrip(c, []byte(req.String()), []byte(want.String())), "pipeline of 100")

		// Every request split at every byte: prefix, a pause, the rest.
		for _, rc := range []struct{ req, want string }{
			{"PING\r\n", pong},
			{multibulk("PING"), pong},
			{"PING abc\r\n", bulk("abc")},
			{multibulk("PING", "hello world"), bulk("hello world")},
			{"PING\r\n" + multibulk("PING", "x") + "PING\r\n", pong + bulk("x") + pong},
		} {
			for i := 1; i < len(rc.req); i++ {
				c.SetDeadline(time.Now().Add(10 * time.Second))
				_, err := c.Write([]byte(rc.req[:i]))
				require.NoError(t, err)
				time.Sleep(2 * time.Millisecond)
				require.NoError(t, roundTrip(c, []byte(rc.req[i:]), []byte(rc.want)), "%q split at %d", rc.req, i)
			}
		}

		// Malformed input: a protocol error reply, then the server closes.
		for _, bad := range []struct{ req, want string }{
			{"*x\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
			{"*1\r\nPING\r\n", "-ERR Protocol error: expected '$', got 'P'\r\n"},
			{"*1\r\n$-5\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
			{"PING\r\n*1\r\n$x\r\nPING\r\n", pong + "-ERR Protocol error: invalid bulk length\r\n"},
		} {
			b := s.dial(t)
			if err := roundTrip(b, []byte(bad.req), []byte(bad.want)); err != nil {
				t.Errorf("%q: %v", bad.req, err)
			}
			b.SetReadDeadline(time.Now().Add(10 * time.Second))
			if n, err := b.Read(make([]byte, 64)); n != 0 || err == nil {
				t.Errorf("%q: after the error reply read %d, %v; want the connection closed", bad.req, n, err)
			}
			b.Close()
		}
		// The first connection is still served.
		require.NoError(t, roundTrip(c, []byte("PING\r\n"), []byte(pong)))
		c.Close()
		s.waitLive(t, 1)
		s.stop(t)
		if before >= 0 {
			waitFDs(t, before+1, "after shutdown (listener allowed)")
		}
	})
}

// TestRespPingReader: a client that reads replies with a RESP reader while
// another goroutine writes 10,000 pipelined PINGs in small random writes.
func TestRespPingReader(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		s := startServer(t, "resp_ping.jasm", 2)
		c := s.dial(t)
		defer c.Close()
		c.SetDeadline(time.Now().Add(30 * time.Second))
		const n = 10_000
		go func() {
			rng := rand.New(rand.NewPCG(3, 4))
			var all []byte
			for i := 0; i < n; i++ {
				all = append(all, multibulk("PING", fmt.Sprint(i))...)
			}
			for len(all) > 0 {
				k := min(len(all), 1+rng.IntN(300))
				if _, err := c.Write(all[:k]); err != nil {
					return
				}
				all = all[k:]
			}
		}()
		r := bufio.NewReader(c)
		for i := 0; i < n; i++ {
			want := bulk(fmt.Sprint(i))
			got := make([]byte, len(want))
			_, err := io.ReadFull(r, got)
			require.NoError(t, err, "reply %d", i)
			if string(got) != want {
				t.Fatalf("reply %d: %q, want %q", i, got, want)
			}
		}
		c.Close()
		s.waitLive(t, 1)
	})
}
