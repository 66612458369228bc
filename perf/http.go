package perf

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/jadevm/jade/bench"
)

// The HTTP scenarios: examples/http.jasm (1 worker) against Go's
// net/http (GOMAXPROCS 1), and in http also a raw Go server (a goroutine
// per net.Conn, a hand-written parser), each in a process of its own
// (`jade httpproc serve`) on the first allowed CPU, the load on the
// second (taskset), runs alternated between the servers.
//
// http_mixed: light GETs of / at 1,000 per second, open loop, each
// measured against its schedule, while 2 connections request
// /work?ms=20 back to back (`jade httpproc mixed`). Gates: the light
// requests' p99 <= 1/30 of net/http's, and heavy throughput no more than
// 10 % below net/http's (each heavy request is the same calibrated CPU
// work on both sides: bench.Spin, http.jasm's /work).
//
// http: wrk -t1 --latency against / at 50 and 400 connections. Gates:
// requests per second >= net/http's; server CPU per request <= the raw
// server's; at 400 connections the latency tail of the latency issue,
// p99 <= the raw server's p99 and max <= 2 x its max.

// httpServerSet runs one child server per implementation.
type httpServerSet struct {
	child []string
	cpu   string
	srv   map[string]*echoChild
	addr  map[string]string
}

func startHTTPServers(child []string, cpu string, impls ...string) (*httpServerSet, error) {
	s := &httpServerSet{child: child, cpu: cpu, srv: map[string]*echoChild{}, addr: map[string]string{}}
	for _, impl := range impls {
		c, err := startEchoChild(child, cpu, "serve", "-impl", impl, "-workers", "1", "-procs", "1")
		if err != nil {
			s.stop()
			return nil, err
		}
		s.srv[impl] = c
		a, err := c.line(30 * time.Second)
		if err != nil {
			s.stop()
			return nil, fmt.Errorf("%s server: %w", impl, err)
		}
		s.addr[impl] = a
	}
	return s, nil
}

// stop stops every server and returns the first error.
func (s *httpServerSet) stop() error {
	var first error
	for impl, c := range s.srv {
		delete(s.srv, impl)
		if err := c.stop(); err != nil && first == nil {
			first = fmt.Errorf("%s server: %w", impl, err)
		}
	}
	return first
}

func httpMixed(o *Options) ([]Result, error) {
	if len(o.HTTPProc) == 0 {
		return []Result{{Name: "http_mixed", Absent: "needs a child command (perf.Options.HTTPProc): run it through `jade perf`"}}, nil
	}
	serverCPU, clientCPU, note := echoPinning()
	fmt.Fprintf(o.Progress, "\n    http_mixed: %s", note)
	warmup, dur := time.Second, 3*time.Second
	if o.Quick {
		warmup, dur = 200*time.Millisecond, time.Second
	}
	impls := []string{"jade", "nethttp"}
	set, err := startHTTPServers(o.HTTPProc, serverCPU, impls...)
	if err != nil {
		return nil, err
	}
	defer set.stop()
	runs := map[string][]bench.HTTPMixed{}
	for i := 0; i < o.Reps; i++ {
		for _, impl := range impls {
			c, err := startEchoChild(o.HTTPProc, clientCPU, "mixed", "-addr", set.addr[impl], "-rate", "1000",
				"-heavy", "2", "-ms", "20", "-warmup", warmup.String(), "-duration", dur.String())
			if err != nil {
				return nil, err
			}
			l, err := c.line(warmup + dur + 60*time.Second)
			if err == nil {
				err = c.stop()
			}
			if err != nil {
				return nil, fmt.Errorf("%s: load: %w", impl, err)
			}
			var m bench.HTTPMixed
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				return nil, fmt.Errorf("%s: load result %q: %w", impl, l, err)
			}
			if m.FirstError != "" || m.LightDone == 0 {
				return nil, fmt.Errorf("%s: %d light requests done, %d light and %d heavy failed: %s", impl, m.LightDone, m.LightErrors, m.HeavyErrors, m.FirstError)
			}
			runs[impl] = append(runs[impl], m)
			fmt.Fprintf(o.Progress, "\n    http_mixed %s: light %v, heavy %.1f/s", impl, m.Light, m.HeavyPerSec())
		}
	}
	if err := set.stop(); err != nil {
		return nil, err
	}
	lights := func(ms []bench.HTTPMixed) (ls []bench.Latencies) {
		for _, m := range ms {
			ls = append(ls, m.Light)
		}
		return ls
	}
	rs := latencyResults("http_mixed", lights(runs["jade"]), lights(runs["nethttp"]), "p99 <= 1/30 of net/http's", nil)
	rs[0].Metric, rs[1].Metric, rs[2].Metric, rs[3].Metric = "light p50", "light p99", "light p99.9", "light max"
	rs[2].Target = "reported"
	p := rs[1].Ratio >= 30
	rs[1].Pass = &p
	heavy := func(ms []bench.HTTPMixed) float64 {
		var xs []float64
		for _, m := range ms {
			xs = append(xs, m.HeavyPerSec())
		}
		return median(xs)
	}
	hj, hg := heavy(runs["jade"]), heavy(runs["nethttp"])
	hr := Result{Name: "http_mixed", Metric: "heavy throughput", Unit: "req/s", Jade: hj, Baseline: hg,
		Target: ">= 90% of net/http's", Reps: o.Reps}
	if hg > 0 {
		hr.Ratio = hj / hg
	}
	hp := hr.Ratio >= 0.9
	hr.Pass = &hp
	return append(rs, hr), nil
}

func httpWrk(o *Options) ([]Result, error) {
	if len(o.HTTPProc) == 0 {
		return []Result{{Name: "http", Absent: "needs a child command (perf.Options.HTTPProc): run it through `jade perf`"}}, nil
	}
	if _, err := exec.LookPath("wrk"); err != nil {
		return []Result{{Name: "http", Absent: "wrk is not installed (apt-get install wrk; scripts/http-bench.sh installs it)"}}, nil
	}
	serverCPU, clientCPU, note := echoPinning()
	fmt.Fprintf(o.Progress, "\n    http: %s", note)
	dur := 3 * time.Second
	if o.Quick {
		dur = time.Second
	}
	impls := []string{"jade", "nethttp", "raw"}
	set, err := startHTTPServers(o.HTTPProc, serverCPU, impls...)
	if err != nil {
		return nil, err
	}
	defer set.stop()
	var rs []Result
	for _, conns := range []int{50, 400} {
		runs := map[string][]wrkRun{}
		for i := 0; i < o.Reps; i++ {
			for _, impl := range impls {
				r, err := runWrk(set.addr[impl], set.srv[impl].cmd.Process.Pid, clientCPU, conns, dur)
				if err != nil {
					return nil, fmt.Errorf("%s, %d conns: %w", impl, conns, err)
				}
				runs[impl] = append(runs[impl], r)
				fmt.Fprintf(o.Progress, "\n    http_c%d %s: %.0f req/s, CPU %.0f ns/req, p99 %v, max %v", conns, impl, r.rps, r.cpu, r.lat.P99, r.lat.Max)
			}
		}
		rs = append(rs, wrkResults(fmt.Sprintf("http_c%d", conns), runs, o.Reps)...)
	}
	return rs, set.stop()
}

// wrkResults turns one connection count's runs into report rows.
func wrkResults(name string, runs map[string][]wrkRun, reps int) []Result {
	col := func(impl string, f func(wrkRun) float64) float64 {
		var xs []float64
		for _, r := range runs[impl] {
			xs = append(xs, f(r))
		}
		return median(xs)
	}
	rps := func(r wrkRun) float64 { return r.rps }
	cpu := func(r wrkRun) float64 { return r.cpu }
	p99 := func(r wrkRun) float64 { return float64(r.lat.P99) }
	mx := func(r wrkRun) float64 { return float64(r.lat.Max) }
	tp := Result{Name: name, Metric: "requests/s", Unit: "req/s", Jade: col("jade", rps), Baseline: col("nethttp", rps),
		Target: ">= net/http", Reps: reps}
	if tp.Baseline > 0 {
		tp.Ratio = tp.Jade / tp.Baseline
	}
	pass := tp.Ratio >= 1
	tp.Pass = &pass
	raw := Result{Name: name, Metric: "requests/s (raw Go server)", Unit: "req/s", Jade: col("jade", rps), Baseline: col("raw", rps), Target: "reported", Reps: reps}
	if raw.Baseline > 0 {
		raw.Ratio = raw.Jade / raw.Baseline
	}
	rs := []Result{tp, raw,
		lowerBetter(name, "server CPU per request (vs raw Go)", "ns", col("jade", cpu), col("raw", cpu), 1, "<= the raw Go server's", reps),
		lowerBetter(name, "server CPU per request (vs net/http)", "ns", col("jade", cpu), col("nethttp", cpu), 0, "reported", reps),
	}
	p99t, maxt := "reported", "reported"
	var p99w, maxw float64
	if strings.HasSuffix(name, "c400") {
		p99t, maxt, p99w, maxw = "<= the raw Go server's (latency issue)", "<= 2 x the raw Go server's (latency issue)", 1, 0.5
	}
	return append(rs,
		lowerBetter(name, "p99 latency (wrk, vs raw Go)", "ns", col("jade", p99), col("raw", p99), p99w, p99t, reps),
		lowerBetter(name, "max latency (wrk, vs raw Go)", "ns", col("jade", mx), col("raw", mx), maxw, maxt, reps))
}

// wrkRun is one wrk run against one server.
type wrkRun struct {
	rps float64         // requests per second
	cpu float64         // the server's CPU time per request, ns; 0 when unreadable
	lat bench.Latencies // P50, P99 and Max from wrk --latency (P999 is not reported by wrk)
}

// runWrk runs wrk -t1 -cN against addr's / for d, pinned to cpu when set,
// and reads the server's (process pid) CPU time around it; extra goes
// before the URL (a Lua script: -s FILE).
func runWrk(addr string, pid int, cpu string, conns int, d time.Duration, extra ...string) (wrkRun, error) {
	argv := []string{"wrk", "-t1", "-c" + strconv.Itoa(conns), "-d" + strconv.Itoa(int(d.Seconds())) + "s", "--latency"}
	argv = append(append(argv, extra...), "http://"+addr+"/")
	if cpu != "" {
		argv = append([]string{"taskset", "-c", cpu}, argv...)
	}
	c0, cerr0 := processCPU(pid)
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	c1, cerr1 := processCPU(pid)
	if err != nil {
		return wrkRun{}, fmt.Errorf("wrk: %w: %s", err, out)
	}
	r, n, err := parseWrk(string(out))
	if err != nil {
		return wrkRun{}, err
	}
	if cerr0 == nil && cerr1 == nil && n > 0 {
		r.cpu = float64(c1-c0) / float64(n)
	}
	return r, nil
}

// parseWrk reads wrk --latency's report: requests per second, the
// request count, the latency distribution's 50 % and 99 % and the thread
// latency maximum. Errors and non-2xx responses fail the run.
func parseWrk(out string) (wrkRun, int64, error) {
	var r wrkRun
	var n int64
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 2 && f[0] == "Requests/sec:":
			r.rps, _ = strconv.ParseFloat(f[1], 64)
		case len(f) >= 3 && f[1] == "requests" && f[2] == "in":
			n, _ = strconv.ParseInt(f[0], 10, 64)
		case len(f) >= 4 && f[0] == "Latency":
			r.lat.Max, _ = parseWrkDuration(f[3])
		case len(f) == 2 && f[0] == "50%":
			r.lat.P50, _ = parseWrkDuration(f[1])
		case len(f) == 2 && f[0] == "99%":
			r.lat.P99, _ = parseWrkDuration(f[1])
		case strings.HasPrefix(strings.TrimSpace(line), "Socket errors:"), strings.HasPrefix(strings.TrimSpace(line), "Non-2xx"):
			return r, n, fmt.Errorf("wrk: %s", strings.TrimSpace(line))
		}
	}
	if r.rps == 0 || n == 0 || r.lat.P99 == 0 {
		return r, n, fmt.Errorf("wrk: no requests/s, request count or latency distribution in %q", out)
	}
	return r, n, nil
}

// parseWrkDuration reads wrk's "253.06us", "1.86ms", "2.00s".
func parseWrkDuration(s string) (time.Duration, error) {
	for _, u := range []struct {
		suffix string
		unit   time.Duration
	}{{"us", time.Microsecond}, {"ms", time.Millisecond}, {"m", time.Minute}, {"s", time.Second}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0, fmt.Errorf("perf: wrk duration %q: %w", s, err)
			}
			return time.Duration(x * float64(u.unit)), nil
		}
	}
	return 0, fmt.Errorf("perf: wrk duration %q: no unit", s)
}
