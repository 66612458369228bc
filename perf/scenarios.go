package perf

import (
	"fmt"
	"time"

	"github.com/jadevm/jade/bench"
)

// Scenarios returns every scenario in its fixed order. Names are stable so
// results can be compared across versions.
func Scenarios() []Scenario {
	return []Scenario{
		{Name: "spawn_join", Run: spawnJoin},
		{Name: "ping_pong", Run: pingPong},
		{Name: "yield", Run: yieldS},
		{Name: "spawn_many", Run: spawnMany},
		{Name: "chained_spawn", Run: chainedSpawn},
		{Name: "yield_many", Run: yieldMany},
		{Name: "chan_ping_pong", Run: chanPingPong},
		{Name: "chan_stream", Run: chanStream},
		{Name: "chan_fan_in", Run: chanFanIn},
		{Name: "select4", Run: select4},
		{Name: "chan_buffered_bytes", Run: chanBufferedBytes},
		{Name: "floors", Run: func(o *Options) ([]Result, error) { return floorRows(o.floors()), nil }},
		{Name: "wake_latency", Run: wakeLatency},
		{Name: "fairness", Run: fairness},
		{Name: "timer_insert_cancel", Run: timerInsertCancel},
		{Name: "timers_1m", Run: timers1M},
		{Name: "sleep_lateness", Run: sleepLateness},
		{Name: "parked_task_bytes", Run: parkedBytes},
		{Name: "idle_wakeups", Run: idleWakeups},
		{Name: "fib30", Run: fib30},
		{Name: "map_put_get", Run: mapPutGet},
		{Name: "echo", Run: echo},
		{Name: "echo_proc", Run: echoProc},
		{Name: "http", Run: httpWrk},
		{Name: "http_mixed", Run: httpMixed},
		{Name: "kv", Run: kvWrk},
		{Name: "resp_ping", Run: respPing, Absent: respAbsent()},
	}
}

func withEnv(f func(e *bench.Env) ([]Result, error)) ([]Result, error) {
	e, err := bench.NewEnv(1)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	// The Jade side runs at the runtime's own GOMAXPROCS (workers + 1);
	// each goroutine baseline is wrapped in goProcs(1).
	return f(e)
}

// pair measures one Jade body and its goroutine baseline (at GOMAXPROCS =
// procs) over n operations each and reports ns per unit, where one call of
// a body with argument k performs k×per units.
type pair struct {
	name, metric, target string
	want                 float64 // minimum ratio, 0: not gated
	workers, n, per      int
	jade                 func(e *bench.Env, k int) error
	goroutine            func(k int)
}

func (p pair) run(o *Options) ([]Result, error) {
	return withEnvN(p.workers, func(e *bench.Env) ([]Result, error) {
		j, err := timeOp(o, p.n, func(k int) error { return p.jade(e, k) })
		if err != nil {
			return nil, err
		}
		g := goProcs(p.workers, func() float64 {
			g, _ := timeOp(o, p.n, func(k int) error { p.goroutine(k); return nil })
			return g
		})
		per := float64(max(p.per, 1))
		return []Result{lowerBetter(p.name, p.metric, "ns", j/per, g/per, p.want, p.target, o.Reps)}, nil
	})
}

var (
	spawnJoin = pair{name: "spawn_join", metric: "spawn+join", target: targetGoroutinesOnly, want: 1, workers: 1, n: 300_000,
		jade: (*bench.Env).SpawnJoinJade, goroutine: bench.SpawnJoinGo}.run
	pingPong = pair{name: "ping_pong", metric: "round trip", target: targetGoroutinesOnly, want: 1, workers: 1, n: 500_000,
		jade: (*bench.Env).PingPongJade, goroutine: bench.PingPongGo}.run
	yieldS = pair{name: "yield", metric: "yield", target: targetGoroutinesOnly, want: 1, workers: 1, n: 2_000_000,
		jade: (*bench.Env).YieldJade, goroutine: bench.YieldGo}.run
	spawnMany = pair{name: "spawn_many", metric: "per task (10k fan-out)", target: targetGoroutinesOnly, want: 1, workers: mnWorkers, n: 5, per: 10_000,
		jade:      repeatJade(func(e *bench.Env) error { return e.SpawnManyJade(10_000) }),
		goroutine: repeatGo(func() { bench.SpawnManyGo(10_000) })}.run
	chainedSpawn = pair{name: "chained_spawn", metric: "per link (10k chain)", target: targetGoroutinesOnly, want: 1, workers: mnWorkers, n: 5, per: 10_000,
		jade:      repeatJade(func(e *bench.Env) error { return e.ChainedSpawnJade(10_000) }),
		goroutine: repeatGo(func() { bench.ChainedSpawnGo(10_000) })}.run
	yieldMany = pair{name: "yield_many", metric: "per yield (100 tasks)", target: targetGoroutinesOnly, want: 1, workers: mnWorkers, n: 5, per: 100 * 1000,
		jade:      repeatJade(func(e *bench.Env) error { return e.YieldManyJade(100, 1000) }),
		goroutine: repeatGo(func() { bench.YieldManyGo(100, 1000) })}.run
)

// repeatJade turns one fixed-size Jade run into a body of k runs.
func repeatJade(f func(e *bench.Env) error) func(e *bench.Env, k int) error {
	return func(e *bench.Env, k int) error {
		for i := 0; i < k; i++ {
			if err := f(e); err != nil {
				return err
			}
		}
		return nil
	}
}

// repeatGo turns one fixed-size goroutine run into a body of k runs.
func repeatGo(f func()) func(k int) {
	return func(k int) {
		for i := 0; i < k; i++ {
			f()
		}
	}
}

func fib30(o *Options) ([]Result, error) {
	return withEnv(func(e *bench.Env) ([]Result, error) {
		L, fn, err := bench.NewLua()
		if err != nil {
			return nil, err
		}
		defer L.Close()
		reps := 3
		if o.Quick {
			reps = 1
		}
		loop := func(f func(int) (int64, error)) (float64, error) {
			return timeOp(o, reps, func(n int) error {
				for i := 0; i < n; i++ {
					if v, err := f(30); err != nil || v != 832040 {
						return fmt.Errorf("fib(30) = %d, %v", v, err)
					}
				}
				return nil
			})
		}
		jg, err := loop(e.FibJadeGo)
		if err != nil {
			return nil, err
		}
		var g float64
		goProcs(1, func() float64 {
			g, err = timeOp(o, reps, func(n int) error {
				for i := 0; i < n; i++ {
					if _, err := bench.FibLua(L, fn); err != nil {
						return err
					}
				}
				return nil
			})
			return g
		})
		if err != nil {
			return nil, err
		}
		rs := []Result{lowerBetter("fib30", "jade-go vs gopherlua", "ns", jg, g, 5, ">= 5x gopher-lua", o.Reps)}
		if !bench.NativeLoop() {
			return append(rs, Result{Name: "fib30", Metric: "jade-native", Absent: "cgo loop not in this build (CGO_ENABLED=0, -tags purego or JADE_NATIVE=0)"}), nil
		}
		jn, err := loop(e.FibJade)
		if err != nil {
			return nil, err
		}
		return append(rs, lowerBetter("fib30", "jade-native vs jade-go", "ns", jn, jg, 2, ">= 2x jade-go", o.Reps)), nil
	})
}

// goProcs runs a goroutine baseline at GOMAXPROCS = n (Jade's worker count).
func goProcs(n int, f func() float64) float64 {
	var v float64
	bench.WithProcs(n, func() { v = f() })
	return v
}

func parkedBytes(o *Options) ([]Result, error) {
	return withEnv(func(e *bench.Env) ([]Result, error) {
		n := 100_000
		if o.Quick {
			n = 30_000
		}
		var jh, gh, jr, gr, jp, gp []float64
		for i := 0; i < o.Reps; i++ {
			j, err := e.ParkedJadeMem(n)
			if err != nil {
				return nil, err
			}
			var g bench.ParkedMem
			goProcs(1, func() float64 { g = bench.ParkedGoMem(n); return 0 })
			jh, gh = append(jh, j.Heap), append(gh, g.Heap)
			jr, gr = append(jr, j.RSS), append(gr, g.RSS)
			jp, gp = append(jp, j.PeakRSS), append(gp, g.PeakRSS)
		}
		r := lowerBetter("parked_task_bytes", "bytes per waiter", "B", median(jh), median(gh), 0, "<= 512 B", o.Reps)
		p := r.Jade <= 512
		r.Pass = &p
		out := []Result{r}
		// The machine's view beside the heap's: resident bytes per waiter
		// after GC with freed memory returned, and the high-water mark of
		// parking plus the broadcast that wakes them all.
		if median(jr) > 0 {
			rr := lowerBetter("parked_task_rss", "resident bytes per waiter after GC", "B", median(jr), median(gr), 0, "<= 512 B", o.Reps)
			pr := rr.Jade <= 512
			rr.Pass = &pr
			out = append(out, rr)
		}
		if median(jp) > 0 {
			out = append(out, lowerBetter("parked_task_peak_rss", "resident peak per waiter (park + broadcast)", "B", median(jp), median(gp), 0, "reported", o.Reps))
		}
		return out, nil
	})
}

func timerInsertCancel(o *Options) ([]Result, error) {
	j, _ := timeOp(o, 3_000_000, func(n int) error { bench.TimerInsertCancelJade(n); return nil })
	g, _ := timeOp(o, 1_000_000, func(n int) error { bench.TimerInsertCancelGo(n); return nil })
	return []Result{lowerBetter("timer_insert_cancel", "insert+cancel", "ns", j, g, 6, ">= 6x AfterFunc+Stop", o.Reps)}, nil
}

func timers1M(o *Options) ([]Result, error) {
	n := 1_000_000
	if o.Quick {
		n = 300_000
	}
	var jn, jb, gn, gb []float64
	for i := 0; i < o.Reps; i++ {
		a, b := bench.Timers1MJade(n)
		c, d := bench.Timers1MGo(n)
		jn, jb, gn, gb = append(jn, a), append(jb, b), append(gn, c), append(gb, d)
	}
	ins := lowerBetter("timers_1m", "ns per insert", "ns", median(jn), median(gn), 4, "<= 1/4 of AfterFunc", o.Reps)
	mem := lowerBetter("timers_1m", "bytes per timer", "B", median(jb), median(gb), 0, "<= 64 B", o.Reps)
	p := mem.Jade <= 64
	mem.Pass = &p
	return []Result{ins, mem}, nil
}

// mnWorkers is the worker count of the M:N scenarios; their goroutine
// baselines run at GOMAXPROCS = mnWorkers.
const mnWorkers = 2

func withEnvN(workers int, f func(e *bench.Env) ([]Result, error)) ([]Result, error) {
	e, err := bench.NewEnv(workers)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	return f(e)
}

// latencyResults turns repeated latency runs into p99 and p99.9 rows
// (medians over the repetitions) plus an ungated max row.
func latencyResults(name string, js, gs []bench.Latencies, target string, gate func(j, g bench.Latencies) bool) []Result {
	median1 := func(ls []bench.Latencies, f func(bench.Latencies) time.Duration) float64 {
		var xs []float64
		for _, l := range ls {
			xs = append(xs, float64(f(l).Nanoseconds()))
		}
		return median(xs)
	}
	quantiles := []struct {
		metric, target string
		of             func(bench.Latencies) time.Duration
	}{
		{"p50 latency", "reported", func(l bench.Latencies) time.Duration { return l.P50 }},
		{"p99 latency", target, func(l bench.Latencies) time.Duration { return l.P99 }},
		{"p99.9 latency", target, func(l bench.Latencies) time.Duration { return l.P999 }},
		{"max latency", "reported, not gated", func(l bench.Latencies) time.Duration { return l.Max }},
	}
	var rs []Result
	for _, q := range quantiles {
		rs = append(rs, lowerBetter(name, q.metric, "ns", median1(js, q.of), median1(gs, q.of), 0, q.target, len(js)))
	}
	if gate != nil { // the gate is on p99.9
		p := true
		for i := range js {
			p = p && gate(js[i], gs[i])
		}
		rs[2].Pass = &p
	}
	rs[0].Hist = mergeHists(js, gs)
	return rs
}

// mergeHists adds up the repetitions' histograms of both columns; nil
// when neither kept its samples.
func mergeHists(js, gs []bench.Latencies) *LatencyHist {
	h := &LatencyHist{LowerNs: make([]int64, bench.HistBuckets), Jade: make([]uint64, bench.HistBuckets), Baseline: make([]uint64, bench.HistBuckets)}
	for i := range h.LowerNs {
		h.LowerNs[i] = bench.HistLower(i).Nanoseconds()
	}
	kept := false
	for _, c := range []struct {
		ls  []bench.Latencies
		sum []uint64
	}{{js, h.Jade}, {gs, h.Baseline}} {
		for _, l := range c.ls {
			kept = kept || l.Hist != nil
			for i, n := range l.Hist {
				c.sum[i] += uint64(n)
			}
		}
	}
	if !kept {
		return nil
	}
	return h
}

// echo: 64-byte round trips through examples/echo.jasm (1 worker) and a
// Go net server with a goroutine per connection, both at GOMAXPROCS 2 with
// their clients in this process; time per message (lower is better).
func echo(o *Options) ([]Result, error) {
	var rs []Result
	for _, conns := range []int{1, 100, 1000} {
		n := 20_000
		if o.Quick {
			n = 5_000
		}
		var js, gs []float64
		for i := 0; i < o.Reps; i++ {
			var err error
			bench.WithProcs(2, func() {
				var j, g bench.EchoResult
				if j, err = runEchoOnce(func() (*bench.EchoServer, error) { return bench.StartJadeEcho(1) }, conns, n); err != nil {
					return
				}
				if g, err = runEchoOnce(bench.StartGoEcho, conns, n); err != nil {
					return
				}
				js, gs = append(js, 1e9/j.MsgsPerSec), append(gs, 1e9/g.MsgsPerSec)
			})
			if err != nil {
				return nil, err
			}
		}
		target, want := "reported", 0.0
		if conns == 1000 {
			target, want = ">= Go net (goroutine per conn)", 1
		}
		rs = append(rs, lowerBetter("echo", fmt.Sprintf("per msg, %d conns", conns), "ns", median(js), median(gs), want, target, o.Reps))
	}
	return rs, nil
}

func runEchoOnce(start func() (*bench.EchoServer, error), conns, n int) (bench.EchoResult, error) {
	s, err := start()
	if err != nil {
		return bench.EchoResult{}, err
	}
	defer s.Close()
	c, err := bench.DialEcho(s.Addr, conns)
	if err != nil {
		return bench.EchoResult{}, err
	}
	defer c.Close()
	if _, err := c.Run(n / 10); err != nil { // warm-up
		return bench.EchoResult{}, err
	}
	return c.Run(n)
}

// fairness: workers + 1 hogs on mnWorkers workers (goroutines at
// GOMAXPROCS = mnWorkers) and a ticker measured against its schedule,
// start + i × 1 ms, in two shapes. fairness_timer: the ticker sleeps to
// each deadline (time.sleep_until / time.Sleep); lateness = when it runs
// after the sleep − the deadline. fairness_outside_wake: a host goroutine
// wakes the ticker at each deadline; lateness = dispatch − deadline, so the
// waker's own delay counts in both columns. fairness_wake_dispatch is the
// outside-wake run measured from the waker's own wake instead. Gates:
// p99.9 <= the S-6 bound and p99 <= 1/100 of the goroutines', every rep.
func fairness(o *Options) ([]Result, error) {
	return withEnvN(mnWorkers, func(e *bench.Env) ([]Result, error) {
		hogs := e.Workers() + 1
		ticks := 500
		if o.Quick {
			ticks = 200
		}
		type shape struct {
			name   string
			jade   func() (bench.Fairness, error)
			gor    func() bench.Fairness
			js, gs []bench.Fairness
		}
		shapes := []*shape{
			{name: "fairness_timer", jade: func() (bench.Fairness, error) { return e.FairnessTimerJade(hogs, ticks) },
				gor: func() bench.Fairness { return bench.FairnessTimerGo(hogs, ticks) }},
			{name: "fairness_outside_wake", jade: func() (bench.Fairness, error) { return e.FairnessWakeJade(hogs, ticks) },
				gor: func() bench.Fairness { return bench.FairnessWakeGo(hogs, ticks) }},
		}
		var slices, bounds []time.Duration
		for i := 0; i < o.Reps; i++ {
			slice, err := e.SliceTime()
			if err != nil {
				return nil, err
			}
			slices, bounds = append(slices, slice), append(bounds, bench.S6Bound(hogs, e.Workers(), slice))
			for _, sh := range shapes {
				f, err := sh.jade()
				if err != nil {
					return nil, err
				}
				var g bench.Fairness
				bench.WithProcs(mnWorkers, func() { g = sh.gor() })
				sh.js, sh.gs = append(sh.js, f), append(sh.gs, g)
			}
		}
		ticker := func(fs []bench.Fairness) (ls []bench.Latencies) {
			for _, f := range fs {
				ls = append(ls, f.Ticker)
			}
			return ls
		}
		var rs []Result
		inBound := true
		for _, sh := range shapes {
			js, gs := ticker(sh.js), ticker(sh.gs)
			lr := latencyResults(sh.name, js, gs, "", nil)
			p99, p999 := true, true
			for i := range js {
				p99 = p99 && js[i].P99*100 <= gs[i].P99
				p999 = p999 && js[i].P999 <= bounds[i]
			}
			inBound = inBound && p999
			lr[1].Target, lr[1].Pass = "p99 <= 1/100 of goroutines' in every rep", &p99
			lr[2].Target, lr[2].Pass = "p99.9 <= S-6 bound in every rep", &p999
			var jr, gr []float64
			for i := range sh.js {
				jr, gr = append(jr, sh.js[i].HogRate), append(gr, sh.gs[i].HogRate)
			}
			rs = append(rs, lr...)
			rs = append(rs, Result{Name: sh.name, Metric: "hog progress", Unit: "units/s", Jade: median(jr), Baseline: median(gr),
				Ratio: median(jr) / median(gr), Target: "reported (units differ: 2^20 VM vs Go loop iterations)", Reps: len(jr),
				Incomparable: true})
		}
		w := shapes[1]
		var jw, gw []bench.Latencies
		for i := range w.js {
			jw, gw = append(jw, w.js[i].WakeDispatch), append(gw, w.gs[i].WakeDispatch)
		}
		rs = append(rs, latencyResults("fairness_wake_dispatch", jw, gw, "reported: from the waker's own wake, not the schedule", nil)...)
		var sl, bd []float64
		for i := range bounds {
			sl, bd = append(sl, float64(slices[i].Nanoseconds())), append(bd, float64(bounds[i].Nanoseconds()))
		}
		rs = append(rs,
			Result{Name: "fairness", Metric: "p99 slice time", Unit: "ns", Jade: median(sl), Target: "reported (hog alone)", Reps: len(sl)},
			Result{Name: "fairness", Metric: "S-6 bound", Unit: "ns", Jade: median(bd), Target: "both shapes' p99.9 <= (ahead+1) x p99 slice in every rep", Pass: &inBound, Reps: len(bd)})
		return rs, nil
	})
}

func idleWakeups(o *Options) ([]Result, error) {
	p0, err := bench.ProcessSwitches()
	if err != nil {
		return []Result{{Name: "idle_wakeups", Absent: err.Error()}}, nil
	}
	period := time.Second
	if o.Quick {
		period = 300 * time.Millisecond
	}
	time.Sleep(period)
	p1, _ := bench.ProcessSwitches()
	return withEnvN(mnWorkers, func(e *bench.Env) ([]Result, error) {
		per, proc, err := e.IdleWakeups(period)
		if err != nil {
			return nil, err
		}
		var worst int64
		for _, n := range per {
			worst = max(worst, n)
		}
		w := Result{Name: "idle_wakeups", Metric: "switches per worker", Unit: "", Jade: float64(worst), Target: "0 per idle period", Reps: 1}
		p := worst == 0
		w.Pass = &p
		pr := Result{Name: "idle_wakeups", Metric: "switches per process", Jade: float64(proc), Baseline: float64(p1 - p0),
			Target: "reported vs idle Go process", Reps: 1}
		if proc > 0 {
			pr.Ratio = float64(p1-p0) / float64(proc)
		}
		return []Result{w, pr}, nil
	})
}
