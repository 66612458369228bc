package perf

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/jadevm/jade/bench"
)

// respPing: examples/resp_ping.jasm (1 worker, in this process) against
// redis-server under redis-benchmark (-t ping -c 50 -P 16), time per
// request (lower is better), when both tools are installed
// (scripts/resp-bench.sh installs them and adds pinning, the unpipelined
// case and server CPU per request).
func respPing(o *Options) ([]Result, error) {
	n := 200_000
	if o.Quick {
		n = 50_000
	}
	var js, rs []float64
	for i := 0; i < o.Reps; i++ {
		s, err := bench.StartJadeResp(1)
		if err != nil {
			return nil, err
		}
		j, err := redisBenchmark(s.Addr, n)
		s.Close()
		if err != nil {
			return nil, err
		}
		r, err := withRedisServer(func(addr string) (float64, error) { return redisBenchmark(addr, n) })
		if err != nil {
			return nil, err
		}
		js, rs = append(js, 1e9/j), append(rs, 1e9/r)
	}
	return []Result{lowerBetter("resp_ping", "per request (PING_MBULK -P 16)", "ns", median(js), median(rs), 1, ">= redis-server req/s", o.Reps)}, nil
}

// respAbsent says why resp_ping cannot run here, or "".
func respAbsent() string {
	var missing []string
	for _, t := range []string{"redis-benchmark", "redis-server"} {
		if _, err := exec.LookPath(t); err != nil {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		return strings.Join(missing, " and ") + " not installed (Debian redis-tools, redis-server; scripts/resp-bench.sh installs them)"
	}
	return ""
}

// redisBenchmark runs redis-benchmark against addr and returns the
// PING_MBULK requests per second.
func redisBenchmark(addr string, n int) (float64, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "redis-benchmark", "-h", host, "-p", port, "-t", "ping",
		"-c", "50", "-n", strconv.Itoa(n), "-P", "16", "--csv").Output()
	if err != nil {
		return 0, fmt.Errorf("perf: redis-benchmark: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), ",")
		if len(f) >= 2 && strings.Trim(f[0], `"`) == "PING_MBULK" {
			return strconv.ParseFloat(strings.Trim(f[1], `"`), 64)
		}
	}
	return 0, fmt.Errorf("perf: redis-benchmark printed no PING_MBULK line: %q", out)
}

// withRedisServer runs f against a fresh redis-server on a free loopback
// port (no persistence).
func withRedisServer(f func(addr string) (float64, error)) (float64, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	addr := l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("perf: redis-server: %w", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("perf: redis-server on %s does not accept: %w", addr, err)
		}
	}
	return f(addr)
}
