package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestEchoLoaderChecks runs the load client against the Go echo server
// (every reply checked and equal) and against one that alters a byte of
// every reply (counted as a mismatch, one per connection).
func TestEchoLoaderChecks(t *testing.T) {
	s, err := StartGoEcho()
	require.NoError(t, err)
	defer s.Close()
	l, err := DialEchoLoad(s.Addr, 10)
	require.NoError(t, err)
	r, err := l.Run(100 * time.Millisecond)
	l.Close()
	require.NoError(t, err)
	require.Equal(t, 10, r.Conns)
	require.Positive(t, r.RoundTrips)
	require.Equal(t, r.RoundTrips, r.Checked)
	require.Zero(t, r.Mismatches)
	require.Equal(t, int(r.RoundTrips), r.Lat.N)
	require.Positive(t, r.PerSec())

	bad := startFlippingEcho(t)
	l, err = DialEchoLoad(bad, 3)
	require.NoError(t, err)
	defer l.Close()
	r, err = l.Run(50 * time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, int64(3), r.Mismatches, "each connection stops at its first wrong reply")
	require.Equal(t, r.RoundTrips, r.Checked)
}

// startFlippingEcho serves an echo that inverts the last byte of each
// 64-byte message.
func startFlippingEcho(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				buf := make([]byte, EchoMsg)
				for {
					if _, err := io.ReadFull(c, buf); err != nil {
						return
					}
					buf[EchoMsg-1] ^= 0xff
					if _, err := c.Write(buf); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// TestEchoProcMain runs both modes of the child in this process, joined
// by pipes as a parent joins them: serve prints its address and stops at
// the end of its stdin; load prints ready, runs on "go" and prints its
// result as JSON.
func TestEchoProcMain(t *testing.T) {
	for _, impl := range []string{"jade", "go"} {
		t.Run(impl, func(t *testing.T) {
			srvIn, srvInW := io.Pipe()
			srvOutR, srvOut := io.Pipe()
			done := make(chan int, 1)
			go func() { done <- EchoProcMain([]string{"serve", "-impl", impl}, srvIn, srvOut, io.Discard) }()
			addr, err := bufio.NewReader(srvOutR).ReadString('\n')
			require.NoError(t, err)
			addr = strings.TrimSpace(addr)

			var out bytes.Buffer
			code := EchoProcMain([]string{"load", "-addr", addr, "-conns", "2", "-warmup", "20ms", "-duration", "100ms"},
				strings.NewReader("go\n"), &out, io.Discard)
			require.Equal(t, 0, code)
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			require.Len(t, lines, 2)
			require.Equal(t, "ready", lines[0])
			var r EchoLoad
			require.NoError(t, json.Unmarshal([]byte(lines[1]), &r))
			require.Equal(t, 2, r.Conns)
			require.Positive(t, r.RoundTrips)
			require.Equal(t, r.RoundTrips, r.Checked)
			require.Zero(t, r.Mismatches)

			require.NoError(t, srvInW.Close())
			require.Equal(t, 0, <-done)
		})
	}
	require.Equal(t, 64, EchoProcMain(nil, nil, io.Discard, io.Discard))
	require.Equal(t, 64, EchoProcMain([]string{"bogus"}, nil, io.Discard, io.Discard))
	require.Equal(t, 64, EchoProcMain([]string{"serve", "-impl", "c"}, nil, io.Discard, io.Discard))
	require.Equal(t, 64, EchoProcMain([]string{"load"}, nil, io.Discard, io.Discard))
}
