package perf

import (
	"fmt"
	"time"

	"github.com/jadevm/jade/bench"
)

// The latency scenarios gated on their floors (floor.go).

// gateTails sets the targets and passes of the p99 and p99.9 rows of rs
// (latencyResults' order).
func gateTails(rs []Result, p99, p999 bool, t99, t999 string) {
	rs[1].Target, rs[1].Pass = t99, &p99
	rs[2].Target, rs[2].Pass = t999, &p999
}

// wake_latency's targets: an OS-thread wake on the reference VM costs
// 10–15 µs, so p99 and p99.9 leave room for a few of them.
const (
	wakeP99Target  = 50 * time.Microsecond
	wakeP999Target = 150 * time.Microsecond
)

// wakeLatency: a host goroutine signals a task parked on an event of an
// otherwise idle runtime; from the signal to the task's dispatch, beside a
// channel send to a parked goroutine.
func wakeLatency(o *Options) ([]Result, error) {
	return withEnvN(1, func(e *bench.Env) ([]Result, error) {
		n := 1000
		if o.Quick {
			n = 300
		}
		fl := o.floor(FloorFutex) // before the detector below: it spins one of its own
		var js, gs []bench.Latencies
		st := StealStats{Stalled: -1}
		for i := 0; i < o.Reps; i++ {
			d := startSteal() // beside the Jade run only: the Go baseline sets GOMAXPROCS
			j, err := e.WakeLatencyJade(n)
			st.add(d.end())
			if err != nil {
				return nil, err
			}
			js = append(js, j)
			bench.WithProcs(1, func() { gs = append(gs, bench.WakeLatencyGo(n)) })
		}
		rs := latencyResults("wake_latency", js, gs, "", nil)
		for i := range rs {
			onFloor(&rs[i], fl)
			rs[i].Steal = &st
		}
		if fl == nil {
			// No floor here (one CPU, not Linux): #19's absolute targets.
			// A channel wake runs the woken goroutine on its waker's
			// thread, which no OS-thread wake can match.
			gateTails(rs, rs[1].Jade <= float64(wakeP99Target), rs[2].Jade <= float64(wakeP999Target),
				fmt.Sprintf("p99 <= %v (absolute; no floor)", wakeP99Target),
				fmt.Sprintf("p99.9 <= %v (absolute; no floor)", wakeP999Target))
			return rs, nil
		}
		// The idle worker is woken across CPUs: the gate is the ratio to
		// the futex floor measured in this run (absolute figures beside).
		gateTails(rs, rs[1].FloorRatio <= floorGate, rs[2].FloorRatio <= floorGate,
			fmt.Sprintf("p99 <= %gx futex floor's", floorGate), fmt.Sprintf("p99.9 <= %gx futex floor's", floorGate))
		return rs, nil
	})
}

func sleepLateness(o *Options) ([]Result, error) {
	return withEnvN(1, func(e *bench.Env) ([]Result, error) {
		n := 300
		if o.Quick {
			n = 100
		}
		fl := o.floor(FloorFutex)
		var js, gs []bench.Latencies
		st := StealStats{Stalled: -1}
		for i := 0; i < o.Reps; i++ {
			d := startSteal() // beside the Jade run only: the Go baseline sets GOMAXPROCS
			j, err := e.SleepLatenessJade(n, time.Millisecond)
			st.add(d.end())
			if err != nil {
				return nil, err
			}
			js = append(js, j)
			bench.WithProcs(1, func() { gs = append(gs, bench.SleepLatenessGo(n, time.Millisecond)) })
		}
		rs := latencyResults("sleep_lateness", js, gs, "", nil)
		for i := range rs { // the floor beside, not gated: a timed wait is not a wake
			onFloor(&rs[i], fl)
			rs[i].Steal = &st
		}
		gateTails(rs, rs[1].Jade <= rs[1].Baseline, rs[2].Jade <= 2*rs[2].Baseline,
			"p99 <= time.Sleep's", "p99.9 <= 2x time.Sleep's")
		return rs, nil
	})
}
