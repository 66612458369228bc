package timerwheel_test

import (
	"fmt"
	"time"

	"github.com/jadevm/jade/timerwheel"
)

// A worker owns one shard: it inserts timers, parks until NextDeadline and
// advances with the time it woke at. Another goroutine cancels through
// CancelRemote. Times are nanoseconds on a monotonic clock; here a fake one.
func Example() {
	const ms = int64(time.Millisecond)
	now := int64(0)
	w, err := timerwheel.New(timerwheel.DefaultConfig(), now)
	if err != nil {
		panic(err)
	}

	w.Insert(now+1500*int64(time.Microsecond), 1) // payload: a wake token
	late := w.Insert(now+10*int64(time.Second), 2)
	w.Insert(now+3*ms, 3)

	// Cancelled from another worker (the task moved there).
	done := make(chan bool)
	go func() { done <- w.CancelRemote(late) }()
	fmt.Println("remote cancel:", <-done)

	var fired []timerwheel.Expired
	for {
		next, ok := w.NextDeadline()
		if !ok {
			break
		}
		now = next // park until the exact deadline, e.g. epoll_pwait2
		fired = w.Advance(now, fired[:0])
		for _, e := range fired {
			fmt.Printf("t=%.1fms wake token %d\n", float64(now)/float64(ms), e.Payload)
		}
	}

	// A periodic job: 10 ms period, Skip keeps the phase.
	job, _ := timerwheel.NewPeriodic(timerwheel.PeriodicConfig{Period: 10 * time.Millisecond, Policy: timerwheel.Skip}, now+10*ms)
	w.Insert(job.Next(), 99)
	for runs := 0; runs < 3; {
		next, _ := w.NextDeadline()
		now = next
		for range w.Advance(now, fired[:0]) {
			sched, _ := job.Start(now)
			now += 25 * ms // the handler is slower than the period
			next, _ := job.Finish(now)
			fmt.Printf("run served %dms, next at %dms\n", sched/ms, next/ms)
			w.Insert(next, 99)
			runs++
		}
	}
	m := job.Metrics()
	fmt.Println("skipped", m.Skipped, "overruns", m.OverrunCount)
	// Output:
	// remote cancel: true
	// t=1.5ms wake token 1
	// t=3.0ms wake token 3
	// run served 13ms, next at 43ms
	// run served 43ms, next at 73ms
	// run served 73ms, next at 103ms
	// skipped 6 overruns 3
}
