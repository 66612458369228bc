package perf

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/jadevm/jade/bench"
)

// respPing: examples/resp_ping.jasm (1 worker, in this process) against
// redis-server under redis-benchmark (-t ping -c 50 -P 16), when both
// tools are installed (scripts/resp-bench.sh installs them and adds
// pinning, a CPU cap and the unpipelined case). Two rows: time per
// request from the client's requests per second (uncapped, the
// single-threaded client is the limit on a small machine, so it is only
// reported), and the server's CPU time per request (every thread of the
// server's process, from /proc/PID/task/*/schedstat), which is gated:
// at least as many requests per CPU-second as redis-server.
func respPing(o *Options) ([]Result, error) {
	n := 200_000
	if o.Quick {
		n = 50_000
	}
	var js, rs, jc, rc []float64
	for i := 0; i < o.Reps; i++ {
		s, err := bench.StartJadeResp(1)
		if err != nil {
			return nil, err
		}
		j, jcpu, err := measureServer(s.Addr, os.Getpid(), n)
		s.Close()
		if err != nil {
			return nil, err
		}
		var rcpu float64
		r, err := withRedisServer(func(addr string, pid int) (float64, error) {
			rps, cpu, err := measureServer(addr, pid, n)
			rcpu = cpu
			return rps, err
		})
		if err != nil {
			return nil, err
		}
		js, rs = append(js, 1e9/j), append(rs, 1e9/r)
		if jcpu > 0 && rcpu > 0 {
			jc, rc = append(jc, jcpu), append(rc, rcpu)
		}
	}
	res := []Result{lowerBetter("resp_ping", "per request (PING_MBULK -P 16)", "ns", median(js), median(rs), 0, "reported (uncapped: the client is the limit)", o.Reps)}
	if len(jc) > 0 {
		res = append(res, lowerBetter("resp_ping", "server CPU per request (-P 16)", "ns", median(jc), median(rc), 1, ">= redis-server req per CPU-second", len(jc)))
	} else {
		res = append(res, Result{Name: "resp_ping", Metric: "server CPU per request (-P 16)", Absent: "no /proc/PID/task/*/schedstat here"})
	}
	return res, nil
}

// measureServer runs redis-benchmark against addr and returns its
// PING_MBULK requests per second and the CPU time per request (ns, over
// both of -t ping's tests) of process pid, or 0 when it cannot be read.
func measureServer(addr string, pid, n int) (rps, cpu float64, err error) {
	c0, cerr := processCPU(pid)
	rps, err = redisBenchmark(addr, n)
	if err != nil {
		return 0, 0, err
	}
	if c1, cerr1 := processCPU(pid); cerr == nil && cerr1 == nil && c1 > c0 {
		cpu = float64(c1-c0) / float64(2*n)
	}
	return rps, cpu, nil
}

// processCPU sums the time on CPU (ns) of every thread of process pid, the
// first field of /proc/PID/task/TID/schedstat.
func processCPU(pid int) (int64, error) {
	run, _, err := processSchedstat(pid)
	return run, err
}

// processSchedstat sums, over every thread of process pid, the time on CPU
// and the time runnable but waiting for a CPU (ns): the first two fields
// of /proc/PID/task/TID/schedstat.
func processSchedstat(pid int) (run, wait int64, err error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, err
	}
	for _, e := range ents {
		b, err := os.ReadFile(dir + "/" + e.Name() + "/schedstat")
		if err != nil {
			continue // the thread ended meanwhile
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			continue
		}
		r, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("perf: %s/%s/schedstat: %w", dir, e.Name(), err)
		}
		w, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("perf: %s/%s/schedstat: %w", dir, e.Name(), err)
		}
		run, wait = run+r, wait+w
	}
	return run, wait, nil
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
// port (no persistence), giving it the server's address and process id.
func withRedisServer(f func(addr string, pid int) (float64, error)) (float64, error) {
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
	return f(addr, cmd.Process.Pid)
}
