//go:build linux

package bus_test

import (
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// silentPeer accepts connections and never writes; it closes them when the
// test ends.
func silentPeer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			if len(conns) > 512 { // the thieves' ends are closed by now
				for _, c := range conns[:256] {
					c.Close()
				}
				conns = append(conns[:0], conns[256:]...)
			}
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().String()
}

// echoClients runs n connections against the Jade echo server at addr,
// each sending one message unique to it and expecting it back first; it
// returns how many got something else (or nothing).
func echoClients(t *testing.T, addr string, n, par int) (misses int64, firstErr error) {
	var next atomic.Int64
	var bad atomic.Int64
	var once sync.Once
	var wg sync.WaitGroup
	for range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				msg := fmt.Sprintf("conn %08d says hi", i)
				c, err := net.DialTimeout("tcp", addr, 5*time.Second)
				if err != nil {
					once.Do(func() { firstErr = err })
					bad.Add(1)
					continue
				}
				c.SetDeadline(time.Now().Add(5 * time.Second))
				got := make([]byte, len(msg))
				_, err = c.Write([]byte(msg))
				if err == nil {
					_, err = io.ReadFull(c, got)
				}
				c.Close()
				if err != nil || string(got) != msg {
					if err == nil {
						err = fmt.Errorf("connection %d got %q", i, got)
					}
					once.Do(func() { firstErr = err })
					bad.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return bad.Load(), firstErr
}

// TestEndingReadNeverStealsAnotherConnectionsData: tasks ending with a
// read in flight (an uncaught 1 µs timeout, or a cancel) race a server
// accepting live connections; every live connection gets its own first
// message back. On io_uring a descriptor number closed while a read that
// names it was still queued was reused by an accept, and the queued read
// consumed the new connection's first message.
func TestEndingReadNeverStealsAnotherConnectionsData(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		b, m, _ := ioBus(t, bus.CapAll, sched.ResourceLimits{})
		p := testkit.Prog(t, b, safetyProg)
		srv := testkit.FreeAddr(t)
		serve, err := m.Spawn(nil, p, "serve", vmloop.Str(srv))
		require.NoError(t, err)
		waitListening(t, srv)
		silent := silentPeer(t)

		stop := make(chan struct{})
		var thieves sync.WaitGroup
		for g := range 4 {
			thieves.Add(1)
			go func() {
				defer thieves.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					var task *sched.Task
					var err error
					if g%2 == 0 {
						task, err = m.Spawn(nil, p, "thief", vmloop.Str(silent), vmloop.I64(1000))
					} else {
						task, err = m.Spawn(nil, p, "reader", vmloop.Str(silent))
						if err == nil {
							time.Sleep(time.Duration(i%50) * time.Microsecond)
							m.Cancel(task)
						}
					}
					if err != nil {
						t.Error(err)
						return
					}
					testkit.Await(t, task)
				}
			}()
		}
		misses, first := echoClients(t, srv, 4000, 4)
		close(stop)
		thieves.Wait()
		m.Cancel(serve)
		testkit.Await(t, serve)
		require.Zerof(t, misses, "live connections that lost their first message (first: %v)", first)
	})
}

// waitListening waits until addr accepts connections.
func waitListening(t *testing.T, addr string) {
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return
		}
		require.Less(t, i, 500, "%s never listened: %v", addr, err)
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTimedOutReadLosesNoBytes: a reader that retries after every
// TimeoutError counts every byte the client sent. A timed-out read's
// operation used to be cancelled and its completion dropped, with the
// bytes it had already consumed (and with a 1 ns timeout the reader never
// saw EOF).
func TestTimedOutReadLosesNoBytes(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		b, m, _ := ioBus(t, bus.CapAll, sched.ResourceLimits{})
		p := testkit.Prog(t, b, safetyProg)
		for _, d := range []int64{1000, 1} {
			addr := testkit.FreeAddr(t)
			task, err := m.Spawn(nil, p, "count", vmloop.Str(addr), vmloop.I64(d))
			require.NoError(t, err)
			waitConn := func() net.Conn {
				for i := 0; ; i++ {
					c, err := net.Dial("tcp", addr)
					if err == nil {
						return c
					}
					require.Less(t, i, 500, "dial: %v", err)
					time.Sleep(10 * time.Millisecond)
				}
			}
			c := waitConn()
			const total = 200_000
			chunk := make([]byte, 100)
			for sent := 0; sent < total; sent += len(chunk) {
				_, err := c.Write(chunk)
				require.NoError(t, err)
				if sent%10_000 == 0 {
					time.Sleep(100 * time.Microsecond) // many small reads
				}
			}
			c.Close()
			o := testkit.Await(t, task)
			require.Equal(t, sched.Success, o.Kind, "count with a %d ns timeout: %v", d, o)
			require.EqualValues(t, total, o.Value.Int(), "bytes counted with a %d ns timeout", d)
		}
	})
}

// TestTimedOutWriteNeverSendsTwice: a writer that retries a chunk only
// after a TimeoutError sends every byte exactly once: a write whose
// operation completed after its timeout fired reports its bytes instead.
func TestTimedOutWriteNeverSendsTwice(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		b, m, _ := ioBus(t, bus.CapAll, sched.ResourceLimits{})
		p := testkit.Prog(t, b, safetyProg)
		const total = 300_000
		sent, got := sendAll(t, m, p, 1000, 1000, total)
		require.EqualValues(t, total, sent)
		require.EqualValues(t, total, got, "bytes the peer received")
	})
}
