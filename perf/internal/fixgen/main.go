// Command fixgen writes the HTML report's fixture, perf/testdata/report_fixture.json:
// made-up figures that exercise every chart, colour and unit of the
// report (go run ./perf/internal/fixgen > perf/testdata/report_fixture.json).
package main

import (
	"math/rand"
	"os"
	"time"

	"github.com/jadevm/jade/bench"
	"github.com/jadevm/jade/perf"
)

func b(v bool) *bool { return &v }

func hist(seed int64, jade, base []float64) *perf.LatencyHist {
	h := &perf.LatencyHist{LowerNs: make([]int64, bench.HistBuckets), Jade: make([]uint64, bench.HistBuckets), Baseline: make([]uint64, bench.HistBuckets)}
	for i := range h.LowerNs {
		h.LowerNs[i] = bench.HistLower(i).Nanoseconds()
	}
	r := rand.New(rand.NewSource(seed))
	add := func(c []uint64, qs []float64) { // p50, p99, p99.9, max: a log-normal-ish spread
		for i := 0; i < 3000; i++ {
			u := r.Float64()
			var v float64
			switch {
			case u < 0.5:
				v = qs[0] * (0.6 + 0.8*r.Float64())
			case u < 0.99:
				v = qs[0] + (qs[1]-qs[0])*r.Float64()*r.Float64()
			case u < 0.999:
				v = qs[1] + (qs[2]-qs[1])*r.Float64()
			default:
				v = qs[2] + (qs[3]-qs[2])*r.Float64()
			}
			c[bench.HistBucket(time.Duration(v))]++
		}
	}
	add(h.Jade, jade)
	add(h.Baseline, base)
	return h
}

func lat(name string, j, g []float64, targets []string, pass []*bool, h *perf.LatencyHist) []perf.Result {
	var rs []perf.Result
	for i, m := range []string{"p50 latency", "p99 latency", "p99.9 latency", "max latency"} {
		r := perf.Result{Name: name, Metric: m, Unit: "ns", Jade: j[i], Baseline: g[i], Ratio: g[i] / j[i], Target: targets[i], Pass: pass[i], Reps: 3}
		if i == 0 {
			r.Hist = h
		}
		rs = append(rs, r)
	}
	return rs
}

func main() {
	tokio := func(v float64) *perf.PeerValue { return &perf.PeerValue{Value: v, Measured: true} }
	rep := &perf.Report{
		Machine:   perf.Machine{CPU: "AMD EPYC 7B13 (fixture)", Cores: 1, Threads: 2, Cache: 64, CPUs: 2, Go: "go1.26.8", Kernel: "linux 6.18", Backend: "io_uring", Workers: 1},
		Run:       perf.RunInfo{Date: time.Date(2026, 12, 6, 4, 0, 0, 0, time.UTC), Commit: "bba949b0f1a2", Reps: 3},
		Peers:     []perf.PeerRun{{Peer: "tokio", Version: "tokio 1.24.2 (rustc 1.63.0)"}, {Peer: "beam", Version: "Erlang/OTP 25 [erts-13.1.5]"}},
		PeerNotes: []string{"fixture: the figures are made up to exercise every chart and colour"},
	}
	rs := []perf.Result{
		{Name: "spawn_join", Metric: "spawn+join", Unit: "ns", Jade: 426, Baseline: 375, Ratio: 375.0 / 426, Target: ">= best peer (min of goroutines, tokio, beam)", Pass: b(false), Reps: 3,
			Tokio: tokio(310), Beam: tokio(1024), Best: "tokio", BestRatio: 310.0 / 426},
		{Name: "yield", Metric: "yield", Unit: "ns", Jade: 64, Baseline: 99, Ratio: 99.0 / 64, Target: ">= best peer (min of goroutines, tokio, beam)", Pass: b(true), Reps: 3,
			Tokio: tokio(84), Best: "tokio", BestRatio: 84.0 / 64},
		{Name: "chained_spawn", Metric: "per link (10k chain)", Unit: "ns", Jade: 610, Baseline: 640, Ratio: 640.0 / 610, Target: ">= best peer (min of goroutines, tokio, beam)", Pass: b(false), Reps: 3,
			Tokio: tokio(205), Best: "tokio", BestRatio: 205.0 / 610},
	}
	for _, f := range []struct {
		name           string
		p50, p99, p999 float64
	}{{"floor_futex", 22e3, 1.4e6, 2.9e6}, {"floor_uring_nop", 850, 2.1e3, 9.6e3}} {
		for _, q := range []struct {
			m string
			v float64
		}{{"p50 latency", f.p50}, {"p99 latency", f.p99}, {"p99.9 latency", f.p999}} {
			rs = append(rs, perf.Result{Name: f.name, Metric: q.m, Unit: "ns", Jade: q.v, Reps: 1, Target: "floor; 3/2000 samples in stalls, steal 12 ms"})
		}
	}
	wl := lat("wake_latency", []float64{20e3, 1.8e6, 4.9e6, 7.2e6}, []float64{200, 56e3, 120e3, 2.3e6},
		[]string{"reported", "p99 <= 1.5x futex floor's", "p99.9 <= 1.5x futex floor's", "reported, not gated"},
		[]*bool{nil, b(true), b(false), nil}, hist(1, []float64{20e3, 1.8e6, 4.9e6, 7.2e6}, []float64{200, 56e3, 120e3, 2.3e6}))
	for i, fl := range []float64{22e3, 1.4e6, 2.9e6} {
		wl[i].Floor, wl[i].FloorNs, wl[i].FloorRatio = "futex", fl, wl[i].Jade/fl
	}
	rs = append(rs, wl...)
	ft := lat("fairness_timer", []float64{0.11e6, 1.19e6, 2.1e6, 3.0e6}, []float64{12e6, 38.8e6, 45e6, 52e6},
		[]string{"reported", "p99 <= 1/100 of goroutines' in every rep", "p99.9 <= S-6 bound in every rep", "reported, not gated"},
		[]*bool{nil, b(false), b(true), nil}, hist(2, []float64{0.11e6, 1.19e6, 2.1e6, 3.0e6}, []float64{12e6, 38.8e6, 45e6, 52e6}))
	ft[1].Beam, ft[1].Best, ft[1].BestRatio = tokio(1.4e6), "beam", 1.4e6/1.19e6
	ft[1].Tokio = &perf.PeerValue{Note: "starved: in 3 of 3 reps fewer than 500 samples within 1500 ms (ran 0, 0, 0)"}
	rs = append(rs, ft...)
	rs = append(rs,
		perf.Result{Name: "fairness_timer", Metric: "hog progress", Unit: "units/s", Jade: 3.1e6, Baseline: 41e6, Ratio: 3.1e6 / 41e6, Target: "reported (units differ: 2^20 VM vs Go loop iterations)", Reps: 3, Incomparable: true},
		perf.Result{Name: "fairness", Metric: "p99 slice time", Unit: "ns", Jade: 1.02e6, Target: "reported (hog alone)", Reps: 3},
		perf.Result{Name: "fairness", Metric: "S-6 bound", Unit: "ns", Jade: 4.08e6, Target: "both shapes' p99.9 <= (ahead+1) x p99 slice in every rep", Pass: b(true), Reps: 3},
		perf.Result{Name: "timer_insert_cancel", Metric: "insert+cancel", Unit: "ns", Jade: 18, Baseline: 121, Ratio: 121.0 / 18, Target: ">= 6x AfterFunc+Stop", Pass: b(true), Reps: 3},
		perf.Result{Name: "timers_1m", Metric: "bytes per timer", Unit: "B", Jade: 48, Baseline: 208, Ratio: 208.0 / 48, Target: "<= 64 B", Pass: b(true), Reps: 3},
		perf.Result{Name: "parked_task_bytes", Metric: "bytes per waiter", Unit: "B", Jade: 488, Baseline: 2163, Ratio: 2163.0 / 488, Target: "<= 512 B, >= best peer", Pass: b(false), Reps: 3,
			Tokio: tokio(194), Beam: tokio(2689), Best: "tokio", BestRatio: 194.0 / 488},
		perf.Result{Name: "parked_task_peak_rss", Metric: "resident peak per waiter (park + broadcast)", Unit: "B", Jade: 9.1e3, Baseline: 8.8e3, Ratio: 8.8 / 9.1, Target: "reported", Reps: 3},
		perf.Result{Name: "idle_wakeups", Metric: "switches per worker", Jade: 0, Target: "0 per idle period", Pass: b(true), Reps: 1},
		perf.Result{Name: "idle_wakeups", Metric: "switches per process", Jade: 0, Baseline: 12, Target: "reported vs idle Go process", Reps: 1},
		perf.Result{Name: "fib30", Metric: "jade-go vs gopherlua", Unit: "ns", Jade: 30.1e6, Baseline: 209e6, Ratio: 209 / 30.1, Target: ">= 5x gopher-lua", Pass: b(true), Reps: 3},
		perf.Result{Name: "fib30", Metric: "jade-native", Absent: "cgo loop not in this build (CGO_ENABLED=0, -tags purego or JADE_NATIVE=0)"},
		perf.Result{Name: "echo_proc_c1", Metric: "round trips/s", Unit: "rt/s", Jade: 45200, Baseline: 41000, Ratio: 45200.0 / 41000, Target: ">= Go net (own process)", Pass: b(true), Reps: 3},
	)
	rs = append(rs, lat("echo_proc_c1", []float64{21e3, 48e3, 95e3, 1.3e6}, []float64{23e3, 51e3, 180e3, 2.2e6},
		[]string{"reported", "reported", "reported", "reported, not gated"}, []*bool{nil, nil, nil, nil},
		hist(3, []float64{21e3, 48e3, 95e3, 1.3e6}, []float64{23e3, 51e3, 180e3, 2.2e6}))...)
	rs = append(rs,
		perf.Result{Name: "echo_proc_c1", Metric: "server switches per rt", Jade: 0.02, Baseline: 2.1, Ratio: 2.1 / 0.02, Target: "reported", Reps: 3},
		perf.Result{Name: "echo_proc_c1", Metric: "client CPU busy", Unit: "CPUs", Jade: 0.98, Baseline: 0.97, Target: "reported (near 1: the client is the limit)", Reps: 3},
		perf.Result{Name: "echo_proc_c1", Metric: "syscalls per rt (strace)", Jade: 2.0, Baseline: 2.0, Ratio: 1, Target: "reported (counted run)", Reps: 1},
		perf.Result{Name: "http_mixed", Metric: "light p99", Unit: "ns", Jade: 0.4e6, Baseline: 13.2e6, Ratio: 33, Target: "p99 <= 1/30 of net/http's", Pass: b(true), Reps: 3},
		perf.Result{Name: "http_mixed", Metric: "heavy throughput", Unit: "req/s", Jade: 46.5, Baseline: 49.1, Ratio: 46.5 / 49.1, Target: ">= 90% of net/http's", Pass: b(true), Reps: 3},
		perf.Result{Name: "http_c400", Metric: "requests/s", Unit: "req/s", Jade: 51000, Baseline: 48000, Ratio: 51.0 / 48, Target: ">= net/http", Pass: b(true), Reps: 3},
		perf.Result{Name: "http_c400", Metric: "server CPU per request (vs net/http)", Unit: "ns", Jade: 21e3, Baseline: 23e3, Ratio: 23.0 / 21, Target: "reported", Reps: 3},
		perf.Result{Name: "resp_ping", Absent: "redis-benchmark not installed"},
	)
	rep.Scenarios = rs
	rep.Floors = []perf.Floor{{Name: "futex", Mechanism: "futex wake between two OS threads pinned to different CPUs", N: 2000, P50: 22e3, P99: 1.4e6, P999: 2.9e6, Max: 3.3e6, Stalled: 3}}
	if err := perf.WriteJSON(os.Stdout, rep); err != nil {
		panic(err)
	}
}
