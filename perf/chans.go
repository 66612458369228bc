package perf

import (
	"fmt"
	"strings"

	"github.com/jadevm/jade/bench"
)

// The channel scenarios (docs/MESSAGING.md): chan_ping_pong, chan_stream
// and chan_fan_in at 1 and mnWorkers workers, select4 and
// chan_buffered_bytes at 1, each beside goroutines over Go channels of
// the same shape (and Tokio and BEAM with --peers).

// Counts of the channel scenarios; peerShapes repeats them.
const (
	chanPingPongN = 200_000   // round trips
	chanStreamN   = 1_000_000 // messages
	chanFanInN    = 10        // rounds of FanInProducers × chanFanInM messages
	chanFanInM    = 1_000     // messages per producer and round
	select4N      = 500_000   // waits
	chanBufN      = 1 << 17   // buffered messages (a power of two: no ring slack)
	chanBufQuick  = 1 << 15
)

// chanWorkers are the worker counts of the channel throughput scenarios.
var chanWorkers = []int{1, mnWorkers}

// workersMetric is a row's metric at a worker count: "round trip, 1
// worker", "per msg, 2 workers".
func workersMetric(metric string, w int) string {
	if w == 1 {
		return metric + ", 1 worker"
	}
	return fmt.Sprintf("%s, %d workers", metric, w)
}

// chanShape is the peer shape of a channel row: the scenario's name, with
// "_w2" at mnWorkers (a peer shape runs at one worker count).
func chanShape(r Result) string {
	if strings.HasSuffix(r.Metric, fmt.Sprintf(", %d workers", mnWorkers)) {
		return fmt.Sprintf("%s_w%d", r.Name, mnWorkers)
	}
	return r.Name
}

// atWorkers runs p at each of chanWorkers, one row each.
func atWorkers(p pair) func(o *Options) ([]Result, error) {
	return func(o *Options) ([]Result, error) {
		var rs []Result
		for _, w := range chanWorkers {
			q := p
			q.workers, q.metric = w, workersMetric(p.metric, w)
			r, err := q.run(o)
			if err != nil {
				return nil, err
			}
			rs = append(rs, r...)
		}
		return rs, nil
	}
}

var (
	chanPingPong = atWorkers(pair{name: "chan_ping_pong", metric: "round trip", target: targetGoroutinesOnly, want: 1, n: chanPingPongN,
		jade: (*bench.Env).ChanPingPongJade, goroutine: bench.ChanPingPongGo})
	chanStream = atWorkers(pair{name: "chan_stream", metric: "per msg", target: targetGoroutinesOnly, want: 1, n: chanStreamN,
		jade: (*bench.Env).ChanStreamJade, goroutine: bench.ChanStreamGo})
	chanFanIn = atWorkers(pair{name: "chan_fan_in", metric: "per msg", target: targetGoroutinesOnly, want: 1, n: chanFanInN, per: bench.FanInProducers * chanFanInM,
		jade:      repeatJade(func(e *bench.Env) error { return e.ChanFanInJade(chanFanInM) }),
		goroutine: repeatGo(func() { bench.ChanFanInGo(chanFanInM) })})
)

// select4: a select over four receive cases of which one holds a message,
// timed over the waits alone (the channel is filled before the clock
// starts), on 1 worker and at GOMAXPROCS 1.
func select4(o *Options) ([]Result, error) {
	return withEnvN(1, func(e *bench.Env) ([]Result, error) {
		n := select4N
		if o.Quick {
			n = n/3 + 1
		}
		if _, err := e.Select4Jade(n/10 + 1); err != nil { // warm-up
			return nil, err
		}
		var js, gs []float64
		for i := 0; i < o.Reps; i++ {
			d, err := e.Select4Jade(n)
			if err != nil {
				return nil, err
			}
			js = append(js, float64(d.Nanoseconds())/float64(n))
			gs = append(gs, goProcs(1, func() float64 { return float64(bench.Select4Go(n).Nanoseconds()) / float64(n) }))
		}
		return []Result{lowerBetter("select4", "per select (4 cases, 1 ready)", "ns", median(js), median(gs), 1, targetGoroutinesOnly, o.Reps)}, nil
	})
}

// chanBufferedBytes: the Go heap a buffered i64 message holds, a channel
// filled by a task beside a Go channel filled by a goroutine.
func chanBufferedBytes(o *Options) ([]Result, error) {
	return withEnv(func(e *bench.Env) ([]Result, error) {
		n := chanBufN
		if o.Quick {
			n = chanBufQuick
		}
		var js, gs []float64
		for i := 0; i < o.Reps; i++ {
			j, err := e.ChanBufferedJade(n)
			if err != nil {
				return nil, err
			}
			js = append(js, j)
			gs = append(gs, goProcs(1, func() float64 { return bench.ChanBufferedGo(n) }))
		}
		return []Result{lowerBetter("chan_buffered_bytes", "bytes per buffered i64", "B", median(js), median(gs), 1, ">= goroutines (Go's buffered chan int64)", o.Reps)}, nil
	})
}
