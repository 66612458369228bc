package sched

import "testing"

// The per-dispatch cost of the latency sampling, hook by hook (the
// chained spawn runs one enqueue and one dispatch per task):
// BenchmarkLatencyHooksSkip is an enqueue that is not sampled plus a
// dispatch that finds no stamp (every unsampled task pays it),
// BenchmarkLatencyHooksStamped a stamped enqueue and its dispatch (one
// task in LatencySample pays it), BenchmarkNanotime one clock read.

func benchWorker(every int32) (*worker, *Task) {
	s := &Scheduler{latEvery: every}
	w := &worker{s: s, latLeft: every}
	e := &Engine{hists: make([]engineHists, 1)}
	e.cfg.Store(&EngineRuntimeConfig{})
	s.workers = []*worker{w}
	return w, &Task{engine: e}
}

func BenchmarkLatencyHooksSkip(b *testing.B) {
	w, t := benchWorker(1 << 30)
	s := w.s
	for b.Loop() {
		if !w.stampSkip(t) {
			s.stampEnqueue(w, t, false)
		}
		if f := t.flags.Load(); f&(flagStamped|flagStats) != 0 {
			w.dispatched(t, f)
		}
	}
}

func BenchmarkLatencyHooksStamped(b *testing.B) {
	w, t := benchWorker(1)
	s := w.s
	for b.Loop() {
		if !w.stampSkip(t) {
			s.stampEnqueue(w, t, false)
		}
		if f := t.flags.Load(); f&(flagStamped|flagStats) != 0 {
			w.dispatched(t, f)
		}
	}
	if t.engine.hists[0].runq.sum.Load() < 0 || t.flags.Load() != 0 {
		b.Fatal("stamp not cleared")
	}
}

func BenchmarkNanotime(b *testing.B) {
	var x int64
	for b.Loop() {
		x += nanotime()
	}
	_ = x
}

// BenchmarkLatencyHooksBaseline is the loop of the hook benchmarks with
// one load of the flags and nothing else: subtract it from theirs.
func BenchmarkLatencyHooksBaseline(b *testing.B) {
	_, t := benchWorker(1 << 30)
	n := 0
	for b.Loop() {
		if t.flags.Load()&flagStats != 0 {
			n++
		}
	}
	_ = n
}
