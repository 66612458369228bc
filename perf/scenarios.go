package perf

import (
	"fmt"

	"github.com/jadevm/jade/bench"
)

// Scenarios returns every scenario in its fixed order. Names are stable so
// results can be compared across versions.
func Scenarios() []Scenario {
	return []Scenario{
		{Name: "spawn_join", Run: spawnJoin},
		{Name: "ping_pong", Run: pingPong},
		{Name: "yield", Run: yieldS},
		{Name: "spawn_many", Absent: "needs multi-worker stealing (issue #3)"},
		{Name: "chained_spawn", Absent: "needs multi-worker stealing (issue #3)"},
		{Name: "yield_many", Absent: "needs multi-worker stealing (issue #3)"},
		{Name: "wake_latency", Absent: "latency histograms land with issue #3"},
		{Name: "fairness", Absent: "fairness benchmark lands with issue #3"},
		{Name: "timer_insert_cancel", Run: timerInsertCancel},
		{Name: "timers_1m", Run: timers1M},
		{Name: "sleep_lateness", Absent: "sleep intrinsic not wired into the scheduler yet (issue #4)"},
		{Name: "parked_task_bytes", Run: parkedBytes},
		{Name: "idle_wakeups", Absent: "idle wake-up counter lands with issue #3"},
		{Name: "fib30", Run: fib30},
		{Name: "echo", Absent: "I/O intrinsics not wired yet (issue #5)"},
		{Name: "resp_ping", Absent: "I/O intrinsics not wired yet (issue #5)"},
	}
}

func withEnv(f func(e *bench.Env) ([]Result, error)) ([]Result, error) {
	e, err := bench.NewEnv(1)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	var rs []Result
	bench.WithProcs(1, func() { rs, err = f(e) })
	return rs, err
}

func spawnJoin(o *Options) ([]Result, error) {
	return withEnv(func(e *bench.Env) ([]Result, error) {
		j, err := timeOp(o, 300_000, e.SpawnJoinJade)
		if err != nil {
			return nil, err
		}
		g, _ := timeOp(o, 300_000, func(n int) error { bench.SpawnJoinGo(n); return nil })
		return []Result{lowerBetter("spawn_join", "spawn+join", "ns", j, g, 5, ">= 5x go+WaitGroup", o.Reps)}, nil
	})
}

func pingPong(o *Options) ([]Result, error) {
	return withEnv(func(e *bench.Env) ([]Result, error) {
		j, err := timeOp(o, 500_000, e.PingPongJade)
		if err != nil {
			return nil, err
		}
		g, _ := timeOp(o, 500_000, func(n int) error { bench.PingPongGo(n); return nil })
		return []Result{lowerBetter("ping_pong", "round trip", "ns", j, g, 4, ">= 4x channels", o.Reps)}, nil
	})
}

func yieldS(o *Options) ([]Result, error) {
	return withEnv(func(e *bench.Env) ([]Result, error) {
		j, err := timeOp(o, 2_000_000, e.YieldJade)
		if err != nil {
			return nil, err
		}
		g, _ := timeOp(o, 2_000_000, func(n int) error { bench.YieldGo(n); return nil })
		return []Result{lowerBetter("yield", "yield", "ns", j, g, 5, ">= 5x runtime.Gosched", o.Reps)}, nil
	})
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
		j, err := timeOp(o, reps, func(n int) error {
			for i := 0; i < n; i++ {
				if v, err := e.FibJade(30); err != nil || v != 832040 {
					return fmt.Errorf("fib(30) = %d, %v", v, err)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		g, err := timeOp(o, reps, func(n int) error {
			for i := 0; i < n; i++ {
				if _, err := bench.FibLua(L, fn); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		return []Result{lowerBetter("fib30", "jade-go vs gopherlua", "ns", j, g, 5, ">= 5x gopher-lua", o.Reps)}, nil
	})
}

func parkedBytes(o *Options) ([]Result, error) {
	return withEnv(func(e *bench.Env) ([]Result, error) {
		n := 100_000
		if o.Quick {
			n = 30_000
		}
		var js, gs []float64
		for i := 0; i < o.Reps; i++ {
			j, err := e.ParkedJade(n)
			if err != nil {
				return nil, err
			}
			js = append(js, j)
			gs = append(gs, bench.ParkedGo(n))
		}
		r := lowerBetter("parked_task_bytes", "bytes per waiter", "B", median(js), median(gs), 0, "<= 512 B", o.Reps)
		p := r.Jade <= 512
		r.Pass = &p
		return []Result{r}, nil
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
