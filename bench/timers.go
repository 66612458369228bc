package bench

import (
	"runtime"
	"time"

	"github.com/jadevm/jade/timerwheel"
)

// TimerInsertCancelJade inserts and cancels n timers 1–2 s ahead (a typical
// I/O timeout) on one wheel shard.
func TimerInsertCancelJade(n int) {
	w, err := timerwheel.New(timerwheel.DefaultConfig(), 0)
	if err != nil {
		panic(err)
	}
	for i := 0; i < n; i++ {
		h := w.Insert(int64(time.Second)+int64(i&1023)*int64(time.Millisecond), uint64(i))
		w.Cancel(h)
	}
}

// TimerInsertCancelGo does the same with time.AfterFunc and Stop.
func TimerInsertCancelGo(n int) {
	f := func() {}
	for i := 0; i < n; i++ {
		t := time.AfterFunc(time.Second+time.Duration(i&1023)*time.Millisecond, f)
		t.Stop()
	}
}

// spread1M scrambles 1M deadlines over [1 s, ~1 h).
func spread1M(i int) time.Duration {
	return time.Second + time.Duration((uint64(i)*2654435761)%3_600_000)*time.Millisecond
}

// Timers1MJade keeps n timers pending on one wheel shard and returns the
// time per insert and the heap bytes per pending timer.
func Timers1MJade(n int) (nsPerInsert, bytesPerTimer float64) {
	hs := make([]timerwheel.Handle, n)
	before := inUse()
	t0 := time.Now()
	w, err := timerwheel.New(timerwheel.DefaultConfig(), 0)
	if err != nil {
		panic(err)
	}
	for i := range hs {
		hs[i] = w.Insert(int64(spread1M(i)), uint64(i))
	}
	el := time.Since(t0)
	after := inUse()
	runtime.KeepAlive(w)
	return float64(el.Nanoseconds()) / float64(n), float64(after-before) / float64(n)
}

// Timers1MGo keeps n time.AfterFunc timers pending, measured the same way.
func Timers1MGo(n int) (nsPerInsert, bytesPerTimer float64) {
	ts := make([]*time.Timer, n)
	f := func() {}
	before := inUse()
	t0 := time.Now()
	for i := range ts {
		ts[i] = time.AfterFunc(spread1M(i), f)
	}
	el := time.Since(t0)
	after := inUse()
	for _, t := range ts {
		t.Stop()
	}
	return float64(el.Nanoseconds()) / float64(n), float64(after-before) / float64(n)
}
