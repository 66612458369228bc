package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// The fairness benchmarks run hogs (endless loops) on every worker, or on
// every P for goroutines, and measure how late a ticker runs against a
// fixed schedule: deadline i is start + i × Period (i = 1 … ticks), where
// start is the ticker's (timer shape) or the waker's (outside-wake shape)
// first clock reading. Both the Jade and the goroutine side of a shape
// use that same schedule, so every delay on the way — a sleeping waker's
// included — counts as lateness in both columns.

// Period is the fairness ticker's schedule step.
const Period = time.Millisecond

// Fairness is the result of one fairness run.
type Fairness struct {
	// Ticker is each tick's lateness against its schedule: for the timer
	// shape, when the ticker runs after its sleep − its deadline; for the
	// outside-wake shape, the ticker's dispatch − its deadline.
	Ticker Latencies
	// WakeDispatch (outside-wake shape only) is each tick's dispatch − the
	// moment the waker itself ran after its sleep: the waker's own delay
	// is not in it.
	WakeDispatch Latencies
	// HogRate is hog progress per second (2^20 loop iterations per unit
	// for Jade, 2^20 increments for goroutines).
	HogRate float64
}

// SliceTime measures the p99 time of one full slice (the engine's
// reduction limit) of a hog running alone: the p99, over 2^20-iteration
// units, of the time per reduction, times the limit.
func (e *Env) SliceTime() (time.Duration, error) {
	var mu sync.Mutex
	var stamps []time.Time
	log := func(t time.Time) { mu.Lock(); stamps = append(stamps, t); mu.Unlock() }
	e.tickLog.Store(&log)
	defer e.tickLog.Store(nil)
	t, err := e.RT.Spawn(e.progs["hog"], "main")
	if err != nil {
		return 0, err
	}
	time.Sleep(200 * time.Millisecond)
	t.Cancel()
	t.Wait(context.Background())
	mu.Lock()
	defer mu.Unlock()
	if len(stamps) < 3 {
		return 0, fmt.Errorf("bench: slice time: the hog made %d units of progress", len(stamps))
	}
	// Skip the first unit (spawn and warm-up); one unit = 2^20 iterations
	// of 3 instructions + the tick intrinsic.
	var ds []time.Duration
	for i := 2; i < len(stamps); i++ {
		ds = append(ds, stamps[i].Sub(stamps[i-1]))
	}
	perReduction := float64(Summarize(ds).P99) / (3<<20 + 3)
	limit := hostbus.Member(e.RT).Engine().Config().ReductionLimit
	return time.Duration(perReduction * float64(limit)), nil
}

// S6Bound is S-6's bound on a woken task's dispatch delay with hogs on
// workers: (queued ahead + 1) × slice, where ahead = ⌈hogs / workers⌉.
func S6Bound(hogs, workers int, slice time.Duration) time.Duration {
	ahead := (hogs + workers - 1) / workers
	return time.Duration(ahead+1) * slice
}

// Workers is the runtime's worker count.
func (e *Env) Workers() int { return e.workers }

// startHogs spawns n hog tasks and returns a function that cancels them,
// waits until no task is live and returns the hogs' progress per second.
func (e *Env) startHogs(n int) (stop func() float64, err error) {
	var hs []*sched.Task
	cancel := func() {
		for _, h := range hs {
			hostbus.Member(e.RT).Cancel(h)
		}
		for hostbus.Scheduler(e.RT).LiveTasks() > 0 {
			time.Sleep(time.Millisecond)
		}
	}
	for i := 0; i < n; i++ {
		t, err := e.RT.Spawn(e.progs["hog"], "main")
		if err != nil {
			cancel()
			return nil, err
		}
		hs = append(hs, hostbus.Task(t))
	}
	e.ticks.Store(0)
	t0 := time.Now()
	return func() float64 {
		rate := float64(e.ticks.Load()) / time.Since(t0).Seconds()
		cancel()
		return rate
	}, nil
}

// startGoHogs starts n spinning goroutines; stop ends them and returns
// their progress per second.
func startGoHogs(n int) (stop func() float64) {
	var halt atomic.Bool
	var units atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := 0
			for !halt.Load() {
				x++
				if x&(1<<20-1) == 0 {
					units.Add(1)
				}
			}
		}()
	}
	t0 := time.Now()
	return func() float64 {
		rate := float64(units.Load()) / time.Since(t0).Seconds()
		halt.Store(true)
		wg.Wait()
		return rate
	}
}

// FairnessTimerJade runs hogs hog tasks and a ticker task that sleeps
// with time.sleep_until to each deadline of its schedule and records,
// with time.now, how late it runs after each sleep.
func (e *Env) FairnessTimerJade(hogs, ticks int) (Fairness, error) {
	var f Fairness
	stop, err := e.startHogs(hogs)
	if err != nil {
		return f, err
	}
	f.Ticker, err = e.ticker(ticks)
	f.HogRate = stop()
	return f, err
}

// FairnessTimerGo is FairnessTimerJade with goroutines: hogs spinning
// goroutines and a ticker goroutine that time.Sleeps to each deadline.
// Run it at GOMAXPROCS = the Jade side's workers.
func FairnessTimerGo(hogs, ticks int) Fairness {
	stop := startGoHogs(hogs)
	ds := make([]time.Duration, 0, ticks)
	done := make(chan struct{})
	go func() {
		defer close(done)
		start := time.Now()
		for i := 1; i <= ticks; i++ {
			dl := start.Add(time.Duration(i) * Period)
			time.Sleep(time.Until(dl))
			ds = append(ds, time.Since(dl))
		}
	}()
	<-done
	return Fairness{Ticker: Summarize(ds), HogRate: stop()}
}

// FairnessWakeJade runs hogs hog tasks and a ticker task that waits on an
// event; a host goroutine (on the runtime's spare P) sleeps to each
// deadline and signals the event, and the ticker reports its dispatch
// through bench.woke. One tick at a time: the waker waits for the
// dispatch before sleeping to the next deadline.
func (e *Env) FairnessWakeJade(hogs, ticks int) (Fairness, error) {
	var f Fairness
	stop, err := e.startHogs(hogs)
	if err != nil {
		return f, err
	}
	ev := e.RT.NewEvent()
	tk, err := e.RT.Spawn(e.progs["waker"], "main", ev, vmloop.I64(int64(ticks)))
	if err != nil {
		stop()
		return f, err
	}
	f.Ticker, f.WakeDispatch = outsideWake(ticks, func() time.Time { e.RT.Signal(ev); return <-e.woke })
	f.HogRate = stop()
	if _, err := tk.Wait(context.Background()); err != nil {
		return f, err
	}
	return f, nil
}

// FairnessWakeGo is FairnessWakeJade with goroutines: the waker is a
// goroutine among the hogs and wakes the ticker goroutine through a
// channel. Run it at GOMAXPROCS = the Jade side's workers.
func FairnessWakeGo(hogs, ticks int) Fairness {
	stop := startGoHogs(hogs)
	ch, woke := make(chan struct{}), make(chan time.Time)
	go func() {
		for range ticks {
			<-ch
			woke <- time.Now()
		}
	}()
	var f Fairness
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.Ticker, f.WakeDispatch = outsideWake(ticks, func() time.Time { ch <- struct{}{}; return <-woke })
	}()
	<-done
	f.HogRate = stop()
	return f
}

// outsideWake sleeps to each deadline of the schedule, calls wake (which
// wakes the ticker and returns its dispatch time) and returns dispatch −
// deadline and dispatch − the waker's own wake for each tick.
func outsideWake(ticks int, wake func() time.Time) (late, wakeDispatch Latencies) {
	ls := make([]time.Duration, 0, ticks)
	ws := make([]time.Duration, 0, ticks)
	start := time.Now()
	for i := 1; i <= ticks; i++ {
		dl := start.Add(time.Duration(i) * Period)
		time.Sleep(time.Until(dl))
		w := time.Now()
		d := wake()
		ls, ws = append(ls, d.Sub(dl)), append(ws, d.Sub(w))
	}
	return Summarize(ls), Summarize(ws)
}
