package bench

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The out-of-process echo shape. BenchmarkEcho's clients are goroutines
// in the server's process, where a Go net server and its client can hand
// a message over on one P; a real client lives in another process. Here
// the server (Jade or Go net) and the load client each run in a process
// of their own: EchoProcMain is the body of both, reached through the
// hidden command `jade echoproc` (the children of `jade perf`'s echo_proc
// scenario).

// EchoLoad is what one load client measured over one run.
type EchoLoad struct {
	Conns      int   `json:"conns"`
	RoundTrips int64 `json:"roundTrips"`
	// Checked counts the replies compared byte for byte with the message
	// they answer; Mismatches the replies that differed (a connection
	// stops at its first, its stream being out of step from then on).
	Checked    int64     `json:"checked"`
	Mismatches int64     `json:"mismatches"`
	Seconds    float64   `json:"seconds"`
	Lat        Latencies `json:"lat"`
}

// PerSec is the throughput in round trips per second.
func (l EchoLoad) PerSec() float64 {
	if l.Seconds <= 0 {
		return 0
	}
	return float64(l.RoundTrips) / l.Seconds
}

// EchoLoader is a set of connections to an echo server. Each sends 64-byte
// messages numbered per connection (connection index, sequence number and
// a pattern of both), waits for the echo, checks it and sends the next.
type EchoLoader struct {
	cs  []net.Conn
	seq []uint64
}

// DialEchoLoad connects conns clients to addr, at most 64 dials at a time
// so that a burst of SYNs cannot overflow the listen backlog.
func DialEchoLoad(addr string, conns int) (*EchoLoader, error) {
	l := &EchoLoader{cs: make([]net.Conn, conns), seq: make([]uint64, conns)}
	errs := make(chan error, conns)
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	for i := range l.cs {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := net.DialTimeout("tcp", addr, 10*time.Second)
			if err != nil {
				errs <- fmt.Errorf("bench: echo load: dial %d: %w", i, err)
				return
			}
			l.cs[i] = c
		}(i)
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// Close closes the connections.
func (l *EchoLoader) Close() {
	for _, c := range l.cs {
		if c != nil {
			c.Close()
		}
	}
}

// fillEcho writes message seq of connection conn into msg.
func fillEcho(msg []byte, conn int, seq uint64) {
	binary.LittleEndian.PutUint32(msg[0:], uint32(conn))
	binary.LittleEndian.PutUint64(msg[4:], seq)
	for k := 12; k < len(msg); k++ {
		msg[k] = byte(uint64(k) + seq + uint64(conn)*7)
	}
}

// Run makes round trips on every connection at once for d (each
// connection finishes the round trip in flight at the deadline) and
// returns the throughput and the round-trip times. An I/O error is an
// error; a reply that differs from its message is counted.
func (l *EchoLoader) Run(d time.Duration) (EchoLoad, error) {
	conns := len(l.cs)
	lat := make([][]time.Duration, conns)
	var checked, bad atomic.Int64
	errs := make(chan error, conns)
	start := make(chan struct{})
	var wg sync.WaitGroup
	t0 := time.Now()
	end := t0.Add(d)
	for i, c := range l.cs {
		wg.Add(1)
		go func(i int, c net.Conn) {
			defer wg.Done()
			msg, buf := make([]byte, EchoMsg), make([]byte, EchoMsg)
			ds := make([]time.Duration, 0, 1024)
			defer func() { lat[i] = ds }()
			c.SetDeadline(end.Add(30 * time.Second))
			<-start
			for {
				s := time.Now()
				if !s.Before(end) {
					return
				}
				l.seq[i]++
				fillEcho(msg, i, l.seq[i])
				if _, err := c.Write(msg); err != nil {
					errs <- fmt.Errorf("bench: echo load: connection %d: write: %w", i, err)
					return
				}
				if _, err := io.ReadFull(c, buf); err != nil {
					errs <- fmt.Errorf("bench: echo load: connection %d: read: %w", i, err)
					return
				}
				ds = append(ds, time.Since(s))
				checked.Add(1)
				if !bytes.Equal(msg, buf) {
					bad.Add(1)
					return
				}
			}
		}(i, c)
	}
	close(start)
	wg.Wait()
	el := time.Since(t0)
	close(errs)
	if err := <-errs; err != nil {
		return EchoLoad{}, err
	}
	var all []time.Duration
	for _, ds := range lat {
		all = append(all, ds...)
	}
	return EchoLoad{Conns: conns, RoundTrips: int64(len(all)), Checked: checked.Load(), Mismatches: bad.Load(),
		Seconds: el.Seconds(), Lat: Summarize(all)}, nil
}

// EchoProcMain runs one child of the out-of-process echo shape and
// returns its exit code (0, 1 on an error, 64 on a usage error):
//
//	serve -impl jade|go [-workers N] [-procs N]
//	    prints the address once it accepts; stops at the end of stdin
//	load -addr A -conns N [-warmup D] [-duration D]
//	    dials, warms up, prints "ready", waits for a line on stdin, runs
//	    for the duration, prints an EchoLoad as one JSON line and closes
//	    its connections at the end of stdin
//
// The two-step start of load lets its parent attach a system-call counter
// to the server between the warm-up and the measured run.
func EchoProcMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return childMain("echoproc", []childMode{
		{"serve", func(a []string) error { return echoServe(a, stdin, stdout, stderr) }},
		{"load", func(a []string) error { return echoLoad(a, stdin, stdout, stderr) }},
	}, args, stderr)
}

// childMode is one mode of a child command (echoproc, httpproc).
type childMode struct {
	name string
	run  func(args []string) error
}

// childMain runs the mode args[0] of child command cmd with the rest of
// args: 0 on success, 64 for a usage error, 1 for a failure.
func childMain(cmd string, modes []childMode, args []string, stderr io.Writer) int {
	var names []string
	for _, m := range modes {
		names = append(names, m.name)
	}
	if len(args) == 0 {
		fmt.Fprintf(stderr, "usage: %s %s [flags]\n", cmd, strings.Join(names, "|"))
		return 64
	}
	for _, m := range modes {
		if m.name != args[0] {
			continue
		}
		err := m.run(args[1:])
		if errors.Is(err, flag.ErrHelp) || errors.Is(err, errUsage) {
			return 64
		}
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(stderr, "%s: unknown mode %q (%s)\n", cmd, args[0], strings.Join(names, " or "))
	return 64
}

// errUsage is a usage error already described on stderr.
var errUsage = errors.New("bench: echoproc: usage")

func echoServe(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("echoproc serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	impl := fs.String("impl", "jade", "server: jade (examples/echo.jasm) or go (net, a goroutine per connection)")
	workers := fs.Int("workers", 1, "Jade worker threads")
	procs := fs.Int("procs", 0, "GOMAXPROCS of the Go server (0: leave it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var s *EchoServer
	var err error
	switch *impl {
	case "jade":
		s, err = StartJadeEcho(*workers)
	case "go":
		if *procs > 0 {
			runtime.GOMAXPROCS(*procs)
		}
		s, err = StartGoEcho()
	default:
		fmt.Fprintf(stderr, "echoproc serve: -impl %q: jade or go\n", *impl)
		return errUsage
	}
	return serveChild("echoproc", s, err, stdin, stdout)
}

// serveChild is the end of a child server's serve mode: it prints the
// address of s (started with err), serves until stdin ends, and closes s.
func serveChild(mode string, s *EchoServer, err error, stdin io.Reader, stdout io.Writer) error {
	if err != nil {
		return fmt.Errorf("bench: %s serve: start: %w", mode, err)
	}
	fmt.Fprintln(stdout, s.Addr)
	io.Copy(io.Discard, stdin)
	if err := s.Close(); err != nil {
		return fmt.Errorf("bench: %s serve: close: %w", mode, err)
	}
	return nil
}

func echoLoad(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("echoproc load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "", "the echo server's `HOST:PORT`")
	conns := fs.Int("conns", 1, "connections, one goroutine each")
	warmup := fs.Duration("warmup", 200*time.Millisecond, "round trips before the measured run")
	dur := fs.Duration("duration", time.Second, "the measured run")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *addr == "" || *conns < 1 {
		fmt.Fprintln(stderr, "echoproc load: -addr is required and -conns must be at least 1")
		return errUsage
	}
	l, err := DialEchoLoad(*addr, *conns)
	if err != nil {
		return err
	}
	defer l.Close()
	w, err := l.Run(*warmup)
	if err != nil {
		return fmt.Errorf("bench: echoproc load: warm-up: %w", err)
	}
	if w.Mismatches > 0 {
		return fmt.Errorf("bench: echoproc load: warm-up: %d replies differed from their message", w.Mismatches)
	}
	fmt.Fprintln(stdout, "ready")
	in := bufio.NewReader(stdin)
	if _, err := in.ReadString('\n'); err != nil {
		return fmt.Errorf("bench: echoproc load: waiting for the start: %w", err)
	}
	res, err := l.Run(*dur)
	if err != nil {
		return err
	}
	b, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("bench: echoproc load: encode: %w", err)
	}
	fmt.Fprintf(stdout, "%s\n", b)
	io.Copy(io.Discard, in)
	return nil
}
