package perf

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jadevm/jade/bench"
	"github.com/jadevm/jade/internal/syncbuf"
)

// echoProc: 64-byte round trips (each connection sends, waits for its
// echo, sends again) from a load client in another process against
// examples/echo.jasm (1 worker) and a Go net server (a goroutine per
// connection, GOMAXPROCS 1), each server in a process of its own, at 1,
// 100 and 1000 connections. With 2 CPUs or more and taskset the servers
// run on the first allowed CPU and the client on the second. The load
// runs alternate Jade, Go, Jade, Go, ...; medians over the repetitions.
// Gate: Jade's round trips per second >= Go net's at every connection
// count. Beside it: the clients' round-trip latencies, the server's CPU
// time and context switches per round trip and the client's CPU use (from
// /proc during the timed runs), and the server's system calls per round
// trip, counted in one more run
// per server and count (a counter slows the server, so that run is not
// timed).
func echoProc(o *Options) ([]Result, error) {
	if len(o.EchoProc) == 0 {
		return []Result{{Name: "echo_proc", Absent: "needs a child command (perf.Options.EchoProc): run it through `jade perf`"}}, nil
	}
	sh := echoProcShape{conns: []int{1, 100, 1000}, warmup: 200 * time.Millisecond, measure: time.Second,
		reps: o.Reps, syscalls: o.Syscalls, child: o.EchoProc, progress: o.Progress}
	if o.Quick {
		sh.warmup, sh.measure = 30*time.Millisecond, 100*time.Millisecond
	}
	rows, err := sh.run()
	if err != nil {
		return nil, err
	}
	var rs []Result
	for _, r := range rows {
		rs = append(rs, r.results()...)
	}
	return rs, nil
}

// echoProcShape is one out-of-process echo measurement.
type echoProcShape struct {
	conns           []int
	warmup, measure time.Duration
	reps            int
	syscalls        string    // counter name (Options.Syscalls)
	child           []string  // runs bench.EchoProcMain
	progress        io.Writer // notes: pinning, the counter, the calls per round trip
}

// echoProcRow is what one connection count measured, one entry per rep
// in the slices.
type echoProcRow struct {
	conns      int
	jade, gnet []echoRun
	// jadeSys and gnetSys are the counted runs (nil when not counted:
	// sysAbsent says why); sysTool names the counter.
	jadeSys, gnetSys   *echoRun
	sysTool, sysAbsent string
}

// echoRun is one load run against one server.
type echoRun struct {
	load     bench.EchoLoad
	cpu      float64          // the server's CPU time per round trip, ns; 0 when unreadable
	client   float64          // the load client's CPU time over the run's wall time; 0 when unreadable
	wait     float64          // both processes' time runnable but off CPU over the wall time; 0 when unreadable
	switches float64          // the server's context switches per round trip; -1 when unreadable
	calls    map[string]int64 // the server's system calls in the run; nil when not counted
}

// run measures every connection count. Its errors name the server and
// count; perf.Run puts the scenario's name in front.
func (sh echoProcShape) run() ([]echoProcRow, error) {
	if sh.progress == nil {
		sh.progress = io.Discard
	}
	serverCPU, clientCPU, note := echoPinning()
	fmt.Fprintf(sh.progress, "\n    echo_proc: %s", note)
	tool, why := syscallTool(sh.syscalls)
	if tool != "" {
		fmt.Fprintf(sh.progress, "\n    echo_proc: system calls counted with %s in a run of their own", tool)
	} else {
		fmt.Fprintf(sh.progress, "\n    echo_proc: system calls not counted: %s", why)
	}
	servers := map[string]*echoChild{}
	defer func() {
		for _, s := range servers {
			s.stop()
		}
	}()
	addrs := map[string]string{}
	for _, impl := range []string{"jade", "go"} {
		s, err := startEchoChild(sh.child, serverCPU, "serve", "-impl", impl, "-workers", "1", "-procs", "1")
		if err != nil {
			return nil, err
		}
		servers[impl] = s
		a, err := s.line(30 * time.Second)
		if err != nil {
			return nil, fmt.Errorf("%s server: %w", impl, err)
		}
		addrs[impl] = a
	}
	var rows []echoProcRow
	for _, conns := range sh.conns {
		row := echoProcRow{conns: conns, sysTool: tool, sysAbsent: why}
		for i := 0; i < max(sh.reps, 1); i++ {
			for _, impl := range []string{"jade", "go"} {
				r, err := sh.load(servers[impl], addrs[impl], clientCPU, conns, "")
				if err != nil {
					return nil, fmt.Errorf("%s, %d conns: %w", impl, conns, err)
				}
				if impl == "jade" {
					row.jade = append(row.jade, r)
				} else {
					row.gnet = append(row.gnet, r)
				}
			}
		}
		if tool != "" {
			for _, impl := range []string{"jade", "go"} {
				r, err := sh.load(servers[impl], addrs[impl], clientCPU, conns, tool)
				if err != nil {
					return nil, fmt.Errorf("%s, %d conns, counting: %w", impl, conns, err)
				}
				fmt.Fprintf(sh.progress, "\n    echo_proc_%d %s: %.2f system calls per round trip (%s): %s", conns, impl,
					float64(sysTotal(r.calls))/float64(r.load.RoundTrips), tool, sysTop(r.calls, r.load.RoundTrips, 6))
				if impl == "jade" {
					row.jadeSys = &r
				} else {
					row.gnetSys = &r
				}
			}
		}
		rows = append(rows, row)
	}
	for impl, s := range servers {
		delete(servers, impl)
		if err := s.stop(); err != nil {
			return nil, fmt.Errorf("%s server: %w", impl, err)
		}
	}
	return rows, nil
}

// load runs one load client against srv; with tool set it counts the
// server's system calls over the measured part.
func (sh echoProcShape) load(srv *echoChild, addr, cpu string, conns int, tool string) (echoRun, error) {
	c, err := startEchoChild(sh.child, cpu, "load", "-addr", addr, "-conns", strconv.Itoa(conns),
		"-warmup", sh.warmup.String(), "-duration", sh.measure.String())
	if err != nil {
		return echoRun{}, err
	}
	defer c.stop()
	if l, err := c.line(60 * time.Second); err != nil || l != "ready" {
		return echoRun{}, fmt.Errorf("load client: want ready, got %q: %w", l, err)
	}
	pid := srv.cmd.Process.Pid
	var ctr *sysCounter
	if tool != "" {
		if ctr, err = startCounter(tool, pid); err != nil {
			return echoRun{}, err
		}
	}
	cpu0, wait0, cerr0 := processSchedstat(pid)
	sw0, serr0 := processSwitches(pid)
	cl0, clwait0, clerr0 := processSchedstat(c.cmd.Process.Pid)
	t0 := time.Now()
	if _, err := io.WriteString(c.in, "go\n"); err != nil {
		return echoRun{}, fmt.Errorf("load client: start: %w", err)
	}
	l, err := c.line(sh.measure + 60*time.Second)
	wall := time.Since(t0)
	cpu1, wait1, cerr1 := processSchedstat(pid)
	sw1, serr1 := processSwitches(pid)
	cl1, clwait1, clerr1 := processSchedstat(c.cmd.Process.Pid)
	var r echoRun
	if ctr != nil {
		calls, cerr := ctr.stop()
		if err == nil && cerr != nil {
			err = cerr
		}
		r.calls = calls
	}
	if err != nil {
		return echoRun{}, fmt.Errorf("load client: %w", err)
	}
	if err := json.Unmarshal([]byte(l), &r.load); err != nil {
		return echoRun{}, fmt.Errorf("load client: result %q: %w", l, err)
	}
	ld := r.load
	if ld.RoundTrips == 0 || ld.Checked != ld.RoundTrips || ld.Mismatches != 0 {
		return echoRun{}, fmt.Errorf("load client: %d round trips, %d replies checked, %d differed from their message",
			ld.RoundTrips, ld.Checked, ld.Mismatches)
	}
	rts := float64(ld.RoundTrips)
	if cerr0 == nil && cerr1 == nil {
		r.cpu = float64(cpu1-cpu0) / rts
	}
	if clerr0 == nil && clerr1 == nil {
		r.client = float64(cl1-cl0) / float64(wall.Nanoseconds())
		if cerr0 == nil && cerr1 == nil {
			r.wait = float64(wait1-wait0+clwait1-clwait0) / float64(wall.Nanoseconds())
		}
	}
	r.switches = -1
	if serr0 == nil && serr1 == nil {
		r.switches = float64(sw1-sw0) / rts
	}
	return r, c.stop()
}

// results turns a row into rows of the report.
func (r echoProcRow) results() []Result {
	name := fmt.Sprintf("echo_proc_%d", r.conns)
	reps := len(r.jade)
	col := func(runs []echoRun, f func(echoRun) float64) float64 {
		var xs []float64
		for _, x := range runs {
			xs = append(xs, f(x))
		}
		return median(xs)
	}
	rate := func(x echoRun) float64 { return x.load.PerSec() }
	j, g := col(r.jade, rate), col(r.gnet, rate)
	tp := Result{Name: name, Metric: "round trips/s", Unit: "rt/s", Jade: j, Baseline: g,
		Target: ">= Go net (own process)", Reps: reps}
	if g > 0 {
		tp.Ratio = j / g
	}
	pass := tp.Ratio >= 1
	tp.Pass = &pass
	rs := []Result{tp}
	lats := func(runs []echoRun) (ls []bench.Latencies) {
		for _, x := range runs {
			ls = append(ls, x.load.Lat)
		}
		return ls
	}
	rs = append(rs, latencyResults(name, lats(r.jade), lats(r.gnet), "reported", nil)...)
	rs = append(rs, lowerBetter(name, "server CPU per rt", "ns",
		col(r.jade, func(x echoRun) float64 { return x.cpu }), col(r.gnet, func(x echoRun) float64 { return x.cpu }), 0, "reported", reps))
	if col(r.jade, func(x echoRun) float64 { return x.switches }) >= 0 {
		rs = append(rs, lowerBetter(name, "server switches per rt", "",
			col(r.jade, func(x echoRun) float64 { return x.switches }), col(r.gnet, func(x echoRun) float64 { return x.switches }), 0, "reported", reps))
	}
	// Near 1 the client, not the server, sets the pace.
	rs = append(rs, Result{Name: name, Metric: "client CPU busy", Unit: "CPUs",
		Jade: col(r.jade, func(x echoRun) float64 { return x.client }), Baseline: col(r.gnet, func(x echoRun) float64 { return x.client }),
		Target: "reported (near 1: the client is the limit)", Reps: reps},
		// Other work on the two CPUs: the time server and client threads
		// were runnable but waited for their CPU.
		Result{Name: name, Metric: "run-queue wait", Unit: "CPUs",
			Jade: col(r.jade, func(x echoRun) float64 { return x.wait }), Baseline: col(r.gnet, func(x echoRun) float64 { return x.wait }),
			Target: "reported (server + client waiting for a CPU)", Reps: reps})
	if r.jadeSys == nil || r.gnetSys == nil {
		return append(rs, Result{Name: name, Metric: "syscalls per rt", Absent: r.sysAbsent})
	}
	per := func(x *echoRun, call string) float64 {
		n := sysTotal(x.calls)
		if call != "" {
			n = x.calls[call]
		}
		return float64(n) / float64(x.load.RoundTrips)
	}
	return append(rs,
		lowerBetter(name, "syscalls per rt ("+r.sysTool+")", "", per(r.jadeSys, ""), per(r.gnetSys, ""), 0, "reported (counted run)", 1),
		lowerBetter(name, "futex per rt ("+r.sysTool+")", "", per(r.jadeSys, "futex"), per(r.gnetSys, "futex"), 0, "reported (counted run)", 1))
}

// echoPinning picks the server's and the client's CPU (the first two this
// process may use) when there are two and taskset is installed; "" means
// not pinned. The note says which.
func echoPinning() (server, client, note string) {
	if _, err := exec.LookPath("taskset"); err != nil {
		return "", "", "not pinning: taskset is not installed (util-linux)"
	}
	cpus, err := allowedCPUs()
	if err != nil {
		return "", "", "not pinning: " + err.Error()
	}
	if len(cpus) < 2 {
		return "", "", fmt.Sprintf("not pinning: %d CPU allowed, the server and the client need one each", len(cpus))
	}
	s, c := strconv.Itoa(cpus[0]), strconv.Itoa(cpus[1])
	return s, c, "servers on CPU " + s + ", load client on CPU " + c + " (taskset)"
}

// allowedCPUs reads this process's CPU list (Cpus_allowed_list: "0-3,6").
func allowedCPUs() ([]int, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return nil, fmt.Errorf("perf: allowed CPUs: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		list, ok := strings.CutPrefix(line, "Cpus_allowed_list:")
		if !ok {
			continue
		}
		var cpus []int
		for _, part := range strings.Split(strings.TrimSpace(list), ",") {
			lo, hi, isRange := strings.Cut(part, "-")
			a, err := strconv.Atoi(lo)
			if err != nil {
				return nil, fmt.Errorf("perf: allowed CPUs: %q: %w", list, err)
			}
			b := a
			if isRange {
				if b, err = strconv.Atoi(hi); err != nil {
					return nil, fmt.Errorf("perf: allowed CPUs: %q: %w", list, err)
				}
			}
			for c := a; c <= b; c++ {
				cpus = append(cpus, c)
			}
		}
		return cpus, nil
	}
	return nil, fmt.Errorf("perf: allowed CPUs: no Cpus_allowed_list in /proc/self/status")
}

// processSwitches sums the voluntary and involuntary context switches of
// every thread of process pid.
func processSwitches(pid int) (int64, error) {
	dirs, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	if err != nil || len(dirs) == 0 {
		return 0, fmt.Errorf("perf: /proc/%d/task not readable: %v", pid, err)
	}
	var sum int64
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue // the thread ended meanwhile
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				sum += n
			} else if v, ok := strings.CutPrefix(line, "nonvoluntary_ctxt_switches:"); ok {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				sum += n
			}
		}
	}
	return sum, nil
}

// echoChild is a running child of the shape: bench.EchoProcMain behind
// the command prefix, pinned to cpu with taskset when cpu is set.
type echoChild struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Reader
	errs    *syncbuf.Buffer
	stopped bool
	err     error
}

func startEchoChild(prefix []string, cpu string, args ...string) (*echoChild, error) {
	argv := append(append([]string(nil), prefix...), args...)
	if cpu != "" {
		argv = append([]string{"taskset", "-c", cpu}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	c := &echoChild{cmd: cmd, errs: &syncbuf.Buffer{}}
	cmd.Stderr = c.errs
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("perf: child: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("perf: child: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("perf: child: start %s: %w", strings.Join(argv, " "), err)
	}
	c.in, c.out = in, bufio.NewReader(out)
	return c, nil
}

// line reads one line of the child's stdout; after timeout the child is
// killed.
func (c *echoChild) line(timeout time.Duration) (string, error) {
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := c.out.ReadString('\n')
		ch <- res{strings.TrimSpace(s), err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return r.s, fmt.Errorf("child output ended: %w (stderr: %s)", r.err, strings.TrimSpace(c.errs.String()))
		}
		return r.s, nil
	case <-time.After(timeout):
		c.cmd.Process.Kill()
		<-ch
		return "", fmt.Errorf("child silent for %v, killed (stderr: %s)", timeout, strings.TrimSpace(c.errs.String()))
	}
}

// stop ends the child's stdin and waits for it (killing it after 30 s);
// a second call returns the first one's result.
func (c *echoChild) stop() error {
	if c.stopped {
		return c.err
	}
	c.stopped = true
	c.in.Close()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			c.err = fmt.Errorf("child %s: %w (stderr: %s)", c.cmd.Args, err, strings.TrimSpace(c.errs.String()))
		}
	case <-time.After(30 * time.Second):
		c.cmd.Process.Kill()
		<-done
		c.err = fmt.Errorf("child %s did not stop, killed", c.cmd.Args)
	}
	return c.err
}
