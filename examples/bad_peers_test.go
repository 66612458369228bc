package examples_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/testkit"
)

// goodClient keeps one well-behaved connection busy until stop is closed:
// every round trip must succeed within its deadline.
type goodClient struct {
	rounds atomic.Int64
	err    error
	done   chan struct{}
}

func startGoodClient(t *testing.T, s *ioServer, req, want []byte, stop <-chan struct{}) *goodClient {
	g := &goodClient{done: make(chan struct{})}
	c := s.dial(t)
	go func() {
		defer close(g.done)
		defer c.Close()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := roundTrip(c, req, want); err != nil {
				g.err = fmt.Errorf("good client, round %d: %w", g.rounds.Load(), err)
				return
			}
			g.rounds.Add(1)
		}
	}()
	return g
}

// TestBadPeers: peers that reset, close in the middle of a request or of
// the server's write, send garbage, or flood 1 MB without reading end only
// their own connection; a well-behaved client is served throughout, every
// bad connection's task ends and no descriptor leaks. One worker, so a
// worker stuck on a bad peer would stall the good client too.
func TestBadPeers(t *testing.T) {
	for _, prog := range []struct {
		file      string
		req, want []byte
		flood     []byte // repeated to 1 MB
	}{
		{"echo.jasm", bytes.Repeat([]byte("e"), 64), bytes.Repeat([]byte("e"), 64), []byte("flood")},
		{"resp_ping.jasm", []byte("PING\r\n"), []byte(pong), []byte("*1\r\n$4\r\nPING\r\n")},
	} {
		t.Run(strings.TrimSuffix(prog.file, ".jasm"), func(t *testing.T) {
			testkit.Pollers(t, func(t *testing.T) {
				before := countFDs()
				s := startServer(t, prog.file, 1)
				stop := make(chan struct{})
				good := startGoodClient(t, s, prog.req, prog.want, stop)
				waitRounds(t, good, 10)
				base := settledFDs(200 * time.Millisecond)

				var wg sync.WaitGroup
				bad := func(name string, f func(c *net.TCPConn) error) {
					wg.Add(1)
					go func() {
						defer wg.Done()
						c, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
						if err != nil {
							t.Errorf("%s: dial: %v", name, err)
							return
						}
						defer c.Close()
						if err := f(c.(*net.TCPConn)); err != nil {
							t.Errorf("%s: %v", name, err)
						}
					}()
				}
				for i := 0; i < 5; i++ {
					// Reset with data in flight: SO_LINGER 0 sends RST on close.
					bad("reset", func(c *net.TCPConn) error {
						c.Write(prog.req)
						c.SetLinger(0)
						return nil
					})
					// Reset while the server waits in read.
					bad("reset-idle", func(c *net.TCPConn) error {
						if err := roundTrip(c, prog.req, prog.want); err != nil {
							return err
						}
						c.SetLinger(0)
						return nil
					})
					// Half a request, then close.
					bad("close-mid-request", func(c *net.TCPConn) error {
						c.Write(prog.req[:len(prog.req)/2])
						time.Sleep(5 * time.Millisecond)
						return nil
					})
					// Close while the server writes a large reply.
					bad("close-mid-write", func(c *net.TCPConn) error {
						big := bytes.Repeat(prog.flood, (256<<10)/len(prog.flood))
						c.SetWriteDeadline(time.Now().Add(2 * time.Second))
						c.Write(big)
						c.SetLinger(0)
						return nil
					})
					// Garbage: random bytes, no newline structure.
					bad("garbage", func(c *net.TCPConn) error {
						g := make([]byte, 100_000)
						for j := range g {
							g[j] = byte(rand.Uint32())
						}
						c.SetWriteDeadline(time.Now().Add(2 * time.Second))
						c.Write(g)
						time.Sleep(20 * time.Millisecond)
						return nil
					})
				}
				// Flood 1 MB without reading, hold the connection while the
				// good client keeps going, then go away.
				bad("flood", func(c *net.TCPConn) error {
					flood := bytes.Repeat(prog.flood, (1<<20)/len(prog.flood)+1)
					c.SetWriteDeadline(time.Now().Add(3 * time.Second))
					c.Write(flood) // may stop when both directions' buffers fill
					r0 := good.rounds.Load()
					time.Sleep(300 * time.Millisecond)
					if good.rounds.Load() == r0 {
						return errors.New("the good client made no progress during the flood")
					}
					return nil
				})
				wg.Wait()
				r0 := good.rounds.Load()
				waitRounds(t, good, r0+10)
				close(stop)
				<-good.done
				require.NoError(t, good.err)
				s.waitLive(t, 1) // only main: every connection task ended
				waitFDs(t, base, "after the bad peers")
				s.stop(t)
				if before >= 0 {
					waitFDs(t, before+1, "after shutdown (listener allowed)")
				}
			})
		})
	}
}

// waitRounds waits until the good client has made n round trips.
func waitRounds(t *testing.T, g *goodClient, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for g.rounds.Load() < n {
		select {
		case <-g.done:
			t.Fatalf("good client stopped: %v", g.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("good client: %d rounds in 10 s, want %d", g.rounds.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}
