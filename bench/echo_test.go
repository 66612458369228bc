package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/vmloop"
)

// BenchmarkEcho measures a TCP echo server over loopback: Go client
// goroutines, one per connection, each doing request/response round trips
// of 64-byte messages (b.N messages in all, shared among the connections).
// The servers:
//
//   - jade: examples/echo.jasm (one task per connection) on a runtime with
//     echoWorkers worker threads;
//   - goroutine: a Go net server with one goroutine per connection.
//
// Both run in this process at GOMAXPROCS = echoWorkers+1 (the P that Jade
// keeps for the host serves the clients; the Go server shares both Ps with
// its clients). Reported: msgs/s, and the p50 and p99 round-trip latency
// seen by the clients. Connections are set up before the timer starts.
func BenchmarkEcho(b *testing.B) {
	for _, conns := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("conns=%d", conns), func(b *testing.B) {
			b.Run("jade", func(b *testing.B) {
				WithProcs(echoWorkers+1, func() { runEcho(b, startJadeEcho(b), conns) })
			})
			b.Run("goroutine", func(b *testing.B) {
				WithProcs(echoWorkers+1, func() { runEcho(b, startGoEcho(b), conns) })
			})
		})
	}
}

// echoWorkers is the Jade worker count of BenchmarkEcho.
const echoWorkers = 1

// echoMsg is the size of one message.
const echoMsg = 64

// startJadeEcho runs examples/echo.jasm on a fresh runtime and returns its
// address once it accepts. The cleanup cancels it and shuts the runtime
// down.
func startJadeEcho(b *testing.B) string {
	b.Helper()
	src, err := os.ReadFile("../examples/echo.jasm")
	if err != nil {
		b.Fatal(err)
	}
	addr := freeLoopback(b)
	rt, err := jade.New(jade.Options{Workers: echoWorkers})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rt.Shutdown(ctx); err != nil {
			b.Error(err)
		}
	})
	p, err := rt.Load("echo.jasm", src)
	if err != nil {
		b.Fatal(err)
	}
	main, err := rt.Spawn(p, "main", vmloop.StrArray([]string{addr}))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { main.Cancel() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return addr
		}
		select {
		case <-main.Sched().Done():
			o, _ := main.Sched().Outcome()
			b.Fatalf("echo.jasm: main ended before listening: %s", o)
		default:
		}
		if time.Now().After(deadline) {
			b.Fatalf("echo.jasm: %s does not accept: %v", addr, err)
		}
	}
}

// startGoEcho runs the goroutine-per-connection Go echo server.
func startGoEcho(b *testing.B) string {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			open = append(open, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				buf := make([]byte, 16384)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						if _, werr := c.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	b.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return l.Addr().String()
}

// freeLoopback returns a loopback address whose port was free a moment
// ago.
func freeLoopback(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// runEcho connects conns clients to addr (one warm-up round trip each),
// then sends b.N messages through them and reports throughput and
// latency.
func runEcho(b *testing.B, addr string, conns int) {
	cs := make([]net.Conn, conns)
	b.Cleanup(func() {
		for _, c := range cs {
			if c != nil {
				c.Close()
			}
		}
	})
	msg := make([]byte, echoMsg)
	for i := range msg {
		msg[i] = byte('a' + i%26)
	}
	// Dial at most 64 at a time: a burst of 1000 SYNs could overflow a
	// small listen backlog and cost seconds of retransmits.
	var dialErr atomic.Value
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	for i := range cs {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := net.DialTimeout("tcp", addr, 10*time.Second)
			if err == nil {
				cs[i] = c
				_, err = echoOnce(c, msg, make([]byte, echoMsg))
			}
			if err != nil {
				dialErr.Store(fmt.Errorf("connection %d: %w", i, err))
			}
		}(i)
	}
	wg.Wait()
	if err, _ := dialErr.Load().(error); err != nil {
		b.Fatal(err)
	}

	var next atomic.Int64 // messages handed out
	lat := make([][]time.Duration, conns)
	errs := make(chan error, conns)
	b.ResetTimer()
	for i, c := range cs {
		wg.Add(1)
		go func(i int, c net.Conn) {
			defer wg.Done()
			buf := make([]byte, echoMsg)
			ds := make([]time.Duration, 0, b.N/conns+1)
			for next.Add(1) <= int64(b.N) {
				d, err := echoOnce(c, msg, buf)
				if err != nil {
					errs <- fmt.Errorf("connection %d: %w", i, err)
					return
				}
				ds = append(ds, d)
			}
			lat[i] = ds
		}(i, c)
	}
	wg.Wait()
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	var all []time.Duration
	for _, ds := range lat {
		all = append(all, ds...)
	}
	l := Summarize(all)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(l.P50.Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(l.P99.Nanoseconds()), "p99-ns")
	runtime.KeepAlive(cs)
}

// echoOnce writes msg and reads it back into buf; it returns the round
// trip time.
func echoOnce(c net.Conn, msg, buf []byte) (time.Duration, error) {
	t0 := time.Now()
	c.SetDeadline(t0.Add(30 * time.Second))
	if _, err := c.Write(msg); err != nil {
		return 0, err
	}
	if _, err := io.ReadFull(c, buf); err != nil {
		return 0, err
	}
	d := time.Since(t0)
	if string(buf) != string(msg) {
		return 0, errors.New("echo: reply differs from the message")
	}
	return d, nil
}
