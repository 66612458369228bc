package perf

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/jadevm/jade/bench"
)

// The kv scenario: examples/kv.jasm (1 worker; the store is one task, each
// connection another) against the same store on Go's net/http (a map
// behind a mutex, GOMAXPROCS 1), each in a process of its own (`jade
// httpproc serve -impl jade-kv|nethttp-kv`) on the first allowed CPU, wrk
// on the second, runs alternated between the servers. Both are preloaded
// with kvKeys keys of kvValue bytes; wrk's Lua script (bench.KVWrkScript)
// makes nine GETs and one PUT of each ten requests, on keys drawn
// uniformly, at 50 and 400 connections. Reported, not gated: requests per
// second, p99 latency and server CPU per request.

const (
	kvKeys  = 10000
	kvValue = 64
)

func kvWrk(o *Options) ([]Result, error) {
	if len(o.HTTPProc) == 0 {
		return []Result{{Name: "kv", Absent: "needs a child command (perf.Options.HTTPProc): run it through `jade perf`"}}, nil
	}
	if _, err := exec.LookPath("wrk"); err != nil {
		return []Result{{Name: "kv", Absent: "wrk is not installed (apt-get install wrk; scripts/http-bench.sh installs it)"}}, nil
	}
	serverCPU, clientCPU, note := echoPinning()
	fmt.Fprintf(o.Progress, "\n    kv: %s", note)
	dur := 3 * time.Second
	if o.Quick {
		dur = time.Second
	}
	dir, err := os.MkdirTemp("", "jade-perf-kv")
	if err != nil {
		return nil, fmt.Errorf("kv: %w", err)
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "mix.lua")
	if err := os.WriteFile(script, []byte(bench.KVWrkScript(kvKeys, kvValue)), 0o644); err != nil {
		return nil, fmt.Errorf("kv: %w", err)
	}
	impls := []string{"jade-kv", "nethttp-kv"}
	set, err := startHTTPServers(o.HTTPProc, serverCPU, impls...)
	if err != nil {
		return nil, err
	}
	defer set.stop()
	for _, impl := range impls {
		if err := bench.KVPreload(set.addr[impl], kvKeys, kvValue); err != nil {
			return nil, fmt.Errorf("%s: %w", impl, err)
		}
	}
	var rs []Result
	for _, conns := range []int{50, 400} {
		runs := map[string][]wrkRun{}
		for i := 0; i < o.Reps; i++ {
			for _, impl := range impls {
				r, err := runWrk(set.addr[impl], set.srv[impl].cmd.Process.Pid, clientCPU, conns, dur, "-s", script)
				if err != nil {
					return nil, fmt.Errorf("%s, %d conns: %w", impl, conns, err)
				}
				runs[impl] = append(runs[impl], r)
				fmt.Fprintf(o.Progress, "\n    kv_c%d %s: %.0f req/s, CPU %.0f ns/req, p99 %v, max %v", conns, impl, r.rps, r.cpu, r.lat.P99, r.lat.Max)
			}
		}
		rs = append(rs, kvResults(fmt.Sprintf("kv_c%d", conns), runs, o.Reps)...)
	}
	return rs, set.stop()
}

// kvResults turns one connection count's runs into report rows.
func kvResults(name string, runs map[string][]wrkRun, reps int) []Result {
	col := func(impl string, f func(wrkRun) float64) float64 {
		var xs []float64
		for _, r := range runs[impl] {
			xs = append(xs, f(r))
		}
		return median(xs)
	}
	j, g := "jade-kv", "nethttp-kv"
	rps := func(r wrkRun) float64 { return r.rps }
	tp := Result{Name: name, Metric: "requests/s (90% GET, 10% PUT)", Unit: "req/s", Jade: col(j, rps), Baseline: col(g, rps),
		Target: "reported", Reps: reps}
	if tp.Baseline > 0 {
		tp.Ratio = tp.Jade / tp.Baseline
	}
	p99 := func(r wrkRun) float64 { return float64(r.lat.P99) }
	mx := func(r wrkRun) float64 { return float64(r.lat.Max) }
	cpu := func(r wrkRun) float64 { return r.cpu }
	return []Result{tp,
		lowerBetter(name, "p99 latency (wrk)", "ns", col(j, p99), col(g, p99), 0, "reported", reps),
		lowerBetter(name, "max latency (wrk)", "ns", col(j, mx), col(g, mx), 0, "reported", reps),
		lowerBetter(name, "server CPU per request", "ns", col(j, cpu), col(g, cpu), 0, "reported", reps),
	}
}
