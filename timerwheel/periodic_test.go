package timerwheel

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// run is one simulated handler run.
type run struct{ scheduled, start, end int64 }

// simulate drives a periodic job through a wheel with a fake clock, the way
// a worker would: park until NextDeadline, Advance, Start the handler, let
// the clock run for the handler's duration, Finish, arm Next. It stops after
// n runs.
func simulate(t *testing.T, cfg PeriodicConfig, first int64, n int, dur func(i int) time.Duration) ([]run, *Periodic) {
	t.Helper()
	c := &fakeClock{}
	w := newWheel(t, DefaultConfig(), 0)
	p, err := NewPeriodic(cfg, first)
	require.NoError(t, err)
	w.Insert(p.Next(), 42)
	var runs []run
	var dst []Expired
	for len(runs) < n {
		d, ok := w.NextDeadline()
		require.True(t, ok, "job timer lost")
		if d > c.now {
			c.Set(d)
		}
		dst = w.Advance(c.now, dst[:0])
		for range dst {
			sched, err := p.Start(c.now)
			require.NoError(t, err)
			r := run{scheduled: sched, start: c.now}
			c.Add(dur(len(runs)))
			next, err := p.Finish(c.now)
			require.NoError(t, err)
			r.end = c.now
			runs = append(runs, r)
			w.Insert(next, 42)
		}
	}
	return runs, p
}

func constDur(d time.Duration) func(int) time.Duration { return func(int) time.Duration { return d } }

func TestPeriodicDriftFast(t *testing.T) {
	runs, p := simulate(t, PeriodicConfig{Period: 10 * time.Millisecond}, 10*ms, 5, constDur(2*time.Millisecond))
	for i, r := range runs {
		if want := 10*ms + int64(i)*12*ms; r.start != want {
			t.Fatalf("run %d started at %d, want %d (drift: period after completion)", i, r.start, want)
		}
	}
	if m := p.Metrics(); m.OverrunCount != 0 || m.Runs != 5 {
		t.Fatalf("metrics %+v", m)
	}
}

// Drift, handler slower than the period: each run starts one period after
// the previous completion; nothing piles up.
func TestPeriodicDriftSlowHandler(t *testing.T) {
	runs, p := simulate(t, PeriodicConfig{Period: 10 * time.Millisecond, Policy: Drift}, 10*ms, 6, constDur(25*time.Millisecond))
	for i := 1; i < len(runs); i++ {
		if runs[i].start != runs[i-1].end+10*ms {
			t.Fatalf("run %d started at %d, previous ended %d", i, runs[i].start, runs[i-1].end)
		}
	}
	m := p.Metrics()
	if m.OverrunCount != 6 || m.Skipped != 0 || m.Dropped != 0 || m.Backlog != 0 {
		t.Fatalf("metrics %+v", m)
	}
	if m.HandlerLast != 25*time.Millisecond || m.HandlerMean != 25*time.Millisecond {
		t.Fatalf("handler durations %+v", m)
	}
	if m.TargetRate != 100 || math.Abs(m.ActualRate-1000.0/35) > 1e-9 {
		t.Fatalf("rates target %v actual %v, want 100 and %v", m.TargetRate, m.ActualRate, 1000.0/35)
	}
}

// Skip, handler slower than the period: the phase is kept, the missed
// instants are skipped and counted.
func TestPeriodicSkipSlowHandler(t *testing.T) {
	runs, p := simulate(t, PeriodicConfig{Period: 10 * time.Millisecond, Policy: Skip}, 10*ms, 5, constDur(25*time.Millisecond))
	for i, r := range runs {
		if want := 10*ms + int64(i)*30*ms; r.start != want || r.scheduled != want {
			t.Fatalf("run %d: %+v, want start %d on phase", i, r, want)
		}
	}
	m := p.Metrics()
	if m.Skipped != 2*5 || m.OverrunCount != 5 {
		t.Fatalf("metrics %+v, want 10 skipped, 5 overruns", m)
	}
}

// Skip with one slow run: back on the original phase afterwards; an end
// exactly on an instant runs it, not skips it.
func TestPeriodicSkipOneSlowRun(t *testing.T) {
	durs := []time.Duration{time.Millisecond, 35 * time.Millisecond, 20 * time.Millisecond, time.Millisecond, time.Millisecond}
	runs, p := simulate(t, PeriodicConfig{Period: 10 * time.Millisecond, Policy: Skip}, 10*ms, 5, func(i int) time.Duration { return durs[i] })
	// 10 (1 ms), 20 (35 ms → ends 55: 30,40,50 skipped), 60 (20 ms → ends 80
	// exactly on 80: 70 skipped, 80 runs), 80, 90.
	want := []int64{10, 20, 60, 80, 90}
	for i, r := range runs {
		if r.start != want[i]*ms {
			t.Fatalf("run %d started at %d ms, want %d", i, r.start/ms, want[i])
		}
	}
	if m := p.Metrics(); m.Skipped != 4 || m.OverrunCount != 2 {
		t.Fatalf("metrics %+v", m)
	}
}

// Queue, one slow run: the missed instants are caught up back to back, then
// the job is on its phase again.
func TestPeriodicQueueCatchUp(t *testing.T) {
	durs := []time.Duration{35 * time.Millisecond, 2 * time.Millisecond, 2 * time.Millisecond, 2 * time.Millisecond, 2 * time.Millisecond, 2 * time.Millisecond, 2 * time.Millisecond}
	runs, p := simulate(t, PeriodicConfig{Period: 10 * time.Millisecond, Policy: Queue}, 10*ms, 7, func(i int) time.Duration { return durs[i] })
	want := []run{
		{10, 10, 45},
		{20, 45, 47}, {30, 47, 49}, {40, 49, 51}, // caught up back to back
		{50, 51, 53},               // 50 was due at 51
		{60, 60, 62}, {70, 70, 72}, // on phase again
	}
	for i, r := range runs {
		w := want[i]
		if r != (run{w.scheduled * ms, w.start * ms, w.end * ms}) {
			t.Fatalf("run %d = %v ms, want %v", i, []int64{r.scheduled / ms, r.start / ms, r.end / ms}, w)
		}
	}
	if m := p.Metrics(); m.Dropped != 0 || m.Backlog != 0 || m.OverrunCount != 1 {
		t.Fatalf("metrics %+v", m)
	}
}

// Queue, handler always slower than the period: catch-up runs are back to
// back and the backlog never exceeds MaxBacklog; the excess is dropped
// (oldest first) and counted.
func TestPeriodicQueueSlowHandlerBounded(t *testing.T) {
	cfg := PeriodicConfig{Period: 10 * time.Millisecond, Policy: Queue, MaxBacklog: 2}
	c := &fakeClock{now: 10 * ms}
	p, err := NewPeriodic(cfg, c.now)
	require.NoError(t, err)
	var prevEnd, prevSched int64 = -1, -1
	for i := range 50 {
		if p.Next() > c.now {
			c.Set(p.Next())
		}
		if i > 0 && c.now != prevEnd {
			t.Fatalf("run %d starts at %d, not back to back after %d", i, c.now, prevEnd)
		}
		sched, err := p.Start(c.now)
		require.NoError(t, err)
		if sched%(10*ms) != 0 || sched <= prevSched {
			t.Fatalf("run %d serves %d after %d: off phase or not increasing", i, sched, prevSched)
		}
		if b := p.Metrics().Backlog; b > 2 {
			t.Fatalf("backlog %d > MaxBacklog", b)
		}
		prevSched = sched
		c.Add(25 * time.Millisecond)
		_, err = p.Finish(c.now)
		require.NoError(t, err)
		if b := p.Metrics().Backlog; b != 2 {
			t.Fatalf("run %d: backlog after finish %d, want 2", i, b)
		}
		prevEnd = c.now
	}
	m := p.Metrics()
	// 50 runs of 25 ms from 10 ms end at 1260 ms: instants 10..1260 are
	// 126, of which 50 were served, 2 wait, the rest were dropped.
	if m.Runs != 50 || m.Dropped != 126-50-2 || m.OverrunCount != 50 {
		t.Fatalf("metrics %+v", m)
	}
	if math.Abs(m.ActualRate-40) > 1e-9 {
		t.Fatalf("ActualRate %v, want 40/s", m.ActualRate)
	}
}

// At most one instance runs: a second Start is refused and counted as the
// run's overrun, once.
func TestPeriodicSingleInstance(t *testing.T) {
	p, err := NewPeriodic(PeriodicConfig{Period: 10 * time.Millisecond}, 0)
	require.NoError(t, err)
	if _, err := p.Finish(0); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("Finish before Start: %v", err)
	}
	_, err = p.Start(0)
	require.NoError(t, err)
	for range 3 {
		if _, err := p.Start(15 * ms); !errors.Is(err, ErrRunning) {
			t.Fatalf("second Start: %v", err)
		}
	}
	next, err := p.Finish(30 * ms) // also late
	if err != nil || next != 40*ms {
		t.Fatalf("Finish = %d, %v", next, err)
	}
	m := p.Metrics()
	if m.RefusedStarts != 3 || m.OverrunCount != 1 || p.Running() {
		t.Fatalf("metrics %+v running %v", m, p.Running())
	}
	if _, err := p.Start(39 * ms); !errors.Is(err, ErrNotDue) {
		t.Fatalf("early Start: %v", err)
	}
	for _, e := range []error{ErrRunning, ErrNotDue, ErrNotRunning} {
		if !strings.HasPrefix(e.Error(), "timerwheel: periodic ") {
			t.Errorf("error %q lacks the package prefix", e)
		}
	}
}

// A late start (the worker was busy) under each policy.
func TestPeriodicLateStart(t *testing.T) {
	for _, c := range []struct {
		pol       OverrunPolicy
		scheduled int64
		skipped   uint64
		dropped   uint64
		backlog   int
	}{
		{Drift, 10, 0, 0, 0},
		{Skip, 40, 3, 0, 0},
		{Queue, 20, 0, 1, 2}, // instants 10..40 due; keep 1 running + 2 waiting
	} {
		p, _ := NewPeriodic(PeriodicConfig{Period: 10 * time.Millisecond, Policy: c.pol, MaxBacklog: 2}, 10*ms)
		s, err := p.Start(45 * ms)
		m := p.Metrics()
		if err != nil || s != c.scheduled*ms || m.Skipped != c.skipped || m.Dropped != c.dropped || m.Backlog != c.backlog {
			t.Errorf("%v: scheduled %d ms (%v), metrics %+v", c.pol, s/ms, err, m)
		}
		if m.LastLateness != time.Duration(45*ms-s) {
			t.Errorf("%v: lateness %v", c.pol, m.LastLateness)
		}
	}
}

func TestOverrunPolicyResolve(t *testing.T) {
	cases := []struct{ job, engine, want OverrunPolicy }{
		{PolicyInherit, PolicyInherit, Drift},
		{PolicyInherit, Skip, Skip},
		{Queue, Skip, Queue},
		{Drift, Queue, Drift},
	}
	for _, c := range cases {
		if got := c.job.Resolve(c.engine); got != c.want {
			t.Errorf("%v.Resolve(%v) = %v, want %v", c.job, c.engine, got, c.want)
		}
	}
	if Queue.String() != "queue" || OverrunPolicy(9).String() != "OverrunPolicy(9)" {
		t.Error("String")
	}
}

func TestPeriodicConfigValidate(t *testing.T) {
	for _, c := range []PeriodicConfig{
		{Period: 0},
		{Period: -1},
		{Period: time.Second, Policy: 7},
		{Period: time.Second, MaxBacklog: -1},
	} {
		_, err := NewPeriodic(c, 0)
		if err == nil || !strings.HasPrefix(err.Error(), "timerwheel: periodic config: ") {
			t.Errorf("%+v: %v", c, err)
		}
	}
	p, err := NewPeriodic(PeriodicConfig{Period: time.Second, Policy: Queue}, 0)
	if err != nil || p.maxBacklog != DefaultMaxBacklog || p.Policy() != Queue {
		t.Fatalf("defaults: %v %+v", err, p)
	}
}
