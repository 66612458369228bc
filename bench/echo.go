package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/examples"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/vmloop"
)

// EchoMsg is the size of one echo message.
const EchoMsg = 64

// EchoServer is a running echo server (Jade or Go) on loopback.
type EchoServer struct {
	Addr string
	stop func() error
}

// Close stops the server.
func (s *EchoServer) Close() error { return s.stop() }

// StartJadeEcho runs examples/echo.jasm (one task per connection) on a new
// runtime with the given workers and returns once it accepts.
func StartJadeEcho(workers int) (*EchoServer, error) {
	return startJadeServer("echo.jasm", examples.Echo, workers)
}

// StartJadeResp runs examples/resp_ping.jasm like StartJadeEcho.
func StartJadeResp(workers int) (*EchoServer, error) {
	return startJadeServer("resp_ping.jasm", examples.RespPing, workers)
}

// StartJadeHTTP runs examples/http.jasm like StartJadeEcho.
func StartJadeHTTP(workers int) (*EchoServer, error) {
	return startJadeServer("http.jasm", examples.HTTP, workers)
}

func startJadeServer(name string, src []byte, workers int) (*EchoServer, error) {
	addr, err := freeLoopback()
	if err != nil {
		return nil, err
	}
	rt, err := jade.New(jade.Options{Workers: workers})
	if err != nil {
		return nil, err
	}
	stop := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return rt.Shutdown(ctx)
	}
	p, err := rt.Load(name, src)
	if err != nil {
		stop()
		return nil, err
	}
	main, err := rt.Spawn(p, "main", vmloop.StrArray([]string{addr}))
	if err != nil {
		stop()
		return nil, err
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return &EchoServer{Addr: addr, stop: stop}, nil
		}
		select {
		case <-hostbus.Task(main).Done():
			o, _ := hostbus.Task(main).Outcome()
			stop()
			return nil, fmt.Errorf("bench: %s: main ended before listening: %s", name, o)
		default:
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("bench: %s: %s does not accept: %w", name, addr, err)
		}
	}
}

// StartGoEcho runs a Go net echo server with a goroutine per connection.
func StartGoEcho() (*EchoServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
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
	stop := func() error {
		l.Close()
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
		return nil
	}
	return &EchoServer{Addr: l.Addr().String(), stop: stop}, nil
}

func freeLoopback() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// EchoClients are connections to an echo server, one goroutine each when
// they run.
type EchoClients struct {
	cs  []net.Conn
	msg []byte
}

// DialEcho connects conns clients to addr (at most 64 dials at a time, so
// a burst of SYNs cannot overflow the listen backlog) and makes one
// warm-up round trip on each.
func DialEcho(addr string, conns int) (*EchoClients, error) {
	c := &EchoClients{cs: make([]net.Conn, conns), msg: make([]byte, EchoMsg)}
	for i := range c.msg {
		c.msg[i] = byte('a' + i%26)
	}
	var dialErr atomic.Value
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	for i := range c.cs {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
			if err == nil {
				c.cs[i] = conn
				_, err = echoOnce(conn, c.msg, make([]byte, EchoMsg))
			}
			if err != nil {
				dialErr.Store(fmt.Errorf("bench: echo connection %d: %w", i, err))
			}
		}(i)
	}
	wg.Wait()
	if err, _ := dialErr.Load().(error); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Close closes the connections.
func (c *EchoClients) Close() {
	for _, conn := range c.cs {
		if conn != nil {
			conn.Close()
		}
	}
}

// EchoResult is one echo run: throughput and the clients' round trips.
type EchoResult struct {
	MsgsPerSec float64
	Lat        Latencies
}

// Run sends n messages through the connections (shared among them, each
// waiting for its echo before sending the next).
func (c *EchoClients) Run(n int) (EchoResult, error) {
	conns := len(c.cs)
	var next atomic.Int64
	lat := make([][]time.Duration, conns)
	errs := make(chan error, conns)
	var wg sync.WaitGroup
	t0 := time.Now()
	for i, conn := range c.cs {
		wg.Add(1)
		go func(i int, conn net.Conn) {
			defer wg.Done()
			buf := make([]byte, EchoMsg)
			ds := make([]time.Duration, 0, n/conns+1)
			for next.Add(1) <= int64(n) {
				d, err := echoOnce(conn, c.msg, buf)
				if err != nil {
					errs <- fmt.Errorf("bench: echo connection %d: %w", i, err)
					return
				}
				ds = append(ds, d)
			}
			lat[i] = ds
		}(i, conn)
	}
	wg.Wait()
	el := time.Since(t0)
	close(errs)
	for err := range errs {
		return EchoResult{}, err
	}
	var all []time.Duration
	for _, ds := range lat {
		all = append(all, ds...)
	}
	return EchoResult{MsgsPerSec: float64(n) / el.Seconds(), Lat: Summarize(all)}, nil
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
