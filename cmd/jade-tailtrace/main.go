// Command jade-tailtrace finds where the tail of a latency benchmark goes:
// it runs the benchmark's loop under Go's execution tracer — wake_latency
// (-shape wake: a host goroutine wakes a task parked on an event of an
// idle runtime, bench.Env.WakeLatencyJade) or sleep_lateness (-shape
// sleep: a task's 1 ms time.sleep, bench.Env.SleepLatenessTraced) — then
// reads the trace back and, for every sample slower than the chosen
// quantile, tells what the worker threads and the Go scheduler did
// between the moment the event was due and the task's dispatch:
//
//   - stw: a stop-the-world (GC sweep or mark termination) overlapped the
//     sample;
//   - gosched: the worker was handing itself to Go's scheduler (yieldGo,
//     runtime.Gosched of a locked thread);
//   - thread: the worker's park returned late (its system call ended more
//     than -thread-slack after the wake: the OS had not run the thread);
//   - p-wait: the worker's goroutine waited Runnable for a P;
//   - other: none of these.
//
// It prints the counts and the events around the slowest samples.
//
// A sample's latency is measured with time.Now, but its window of events
// is taken on the trace's own clock, from the host's start log to the log
// of that latency (which the host writes once the woken task has told it
// it ran). The two clocks differ on Windows: Go's tracer stamps events
// with the CPU's tick counter there and time.Now reads the coarser
// interrupt-time counter (the runtime's osHasLowResClock), and under Wine
// a latency so measured came out shorter than the same wake on the
// trace's timeline, so a window of start + latency often ended before the
// worker ran again.
//
// Usage:
//
//	go run ./cmd/jade-tailtrace [-shape wake|sleep] [-n 3000] [-q 0.99] [-show 5] [-trace FILE]
//	go run ./cmd/jade-tailtrace -read FILE   # analyse a trace recorded before
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/trace"
	"sort"
	"strings"
	"time"

	xtrace "golang.org/x/exp/trace"

	"github.com/jadevm/jade/bench"
)

func main() {
	shape := flag.String("shape", "wake", "the benchmark: wake (wake_latency) or sleep (sleep_lateness, 1 ms sleeps)")
	n := flag.Int("n", 3000, "samples to record")
	q := flag.Float64("q", 0.99, "explain the samples slower than this quantile")
	show := flag.Int("show", 5, "print the events around this many of the slowest samples")
	out := flag.String("trace", "", "keep the recorded trace in `FILE` (default: a temporary file)")
	read := flag.String("read", "", "analyse the trace in `FILE` instead of recording one")
	slack := flag.Duration("thread-slack", 50*time.Microsecond, "a park that returns later than this after the wake counts as a late thread")
	flag.Parse()
	path := *read
	if path == "" {
		var err error
		if path, err = record(*shape, *n, *out); err != nil {
			fmt.Fprintf(os.Stderr, "jade-tailtrace: %v\n", err)
			os.Exit(1)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "jade-tailtrace: %v\n", err)
		os.Exit(1)
	}
	defer f.Close()
	a, err := analyse(f)
	if err != nil {
		fmt.Fprintf(os.Stderr, "jade-tailtrace: %s: %v\n", path, err)
		os.Exit(1)
	}
	a.report(os.Stdout, *q, *show, *slack)
	fmt.Printf("trace: %s\n", path)
}

// record runs n samples of shape on a one-worker runtime under the
// tracer and returns the trace file.
func record(shape string, n int, path string) (string, error) {
	if shape != "wake" && shape != "sleep" {
		return "", fmt.Errorf("record: unknown -shape %q (want wake or sleep)", shape)
	}
	var f *os.File
	var err error
	if path == "" {
		f, err = os.CreateTemp("", "jade-wake-*.trace")
	} else {
		f, err = os.Create(path)
	}
	if err != nil {
		return "", fmt.Errorf("record: %w", err)
	}
	defer f.Close()
	e, err := bench.NewEnv(1)
	if err != nil {
		return "", fmt.Errorf("record: %w", err)
	}
	defer e.Close()
	if err := trace.Start(f); err != nil {
		return "", fmt.Errorf("record: %w", err)
	}
	var l bench.Latencies
	if shape == "wake" {
		l, err = e.WakeLatencyJade(n)
	} else {
		l, err = e.SleepLatenessTraced(n, time.Millisecond)
	}
	trace.Stop()
	if err != nil {
		return "", fmt.Errorf("record: %w", err)
	}
	fmt.Printf("%s, %d samples, 1 worker: p50 %v p99 %v p99.9 %v max %v\n", shape, n, l.P50, l.P99, l.P999, l.Max)
	return f.Name(), nil
}

// event is one scheduler event of the trace, rendered.
type event struct {
	t      xtrace.Time
	thread xtrace.ThreadID
	g      xtrace.GoID // the goroutine whose state changed, or NoGoroutine
	from   xtrace.GoState
	to     xtrace.GoState
	reason string
	text   string
}

// sample is one wake: when it started and ended on the trace's clock,
// and how long it took as the benchmark measured it (time.Now).
type sample struct {
	t0, end xtrace.Time
	d       time.Duration
}

// stw is one stop-the-world range.
type stw struct{ begin, end xtrace.Time }

type analysis struct {
	events  []event
	samples []sample
	stws    []stw
	host    xtrace.GoID // the goroutine that logs the samples
}

// analyse reads a trace recorded by record.
func analyse(r io.Reader) (*analysis, error) {
	tr, err := xtrace.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("analyse: %w", err)
	}
	a := &analysis{host: xtrace.NoGoroutine}
	var start xtrace.Time
	open := map[string]xtrace.Time{}
	for {
		ev, err := tr.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("analyse: %w", err)
		}
		switch ev.Kind() {
		case xtrace.EventLog:
			l := ev.Log()
			if l.Category != bench.TraceCategory {
				continue
			}
			if rest, ok := strings.CutPrefix(l.Message, bench.TraceEnd); ok {
				// Logged by the task itself as its sample ended: no host
				// goroutine to leave out.
				if d, err := time.ParseDuration(rest); err == nil {
					a.samples = append(a.samples, sample{ev.Time() - xtrace.Time(d), ev.Time(), d})
				}
				continue
			}
			a.host = ev.Goroutine()
			if l.Message == bench.TraceStart {
				start = ev.Time()
			} else if d, err := time.ParseDuration(l.Message); err == nil {
				a.samples = append(a.samples, sample{start, ev.Time(), d})
			}
		case xtrace.EventStateTransition:
			st := ev.StateTransition()
			e := event{t: ev.Time(), thread: ev.Thread(), g: xtrace.NoGoroutine, reason: st.Reason}
			switch st.Resource.Kind {
			case xtrace.ResourceGoroutine:
				e.g = st.Resource.Goroutine()
				e.from, e.to = st.Goroutine()
				e.text = fmt.Sprintf("M%d G%d %v→%v %s", ev.Thread(), e.g, e.from, e.to, st.Reason)
			case xtrace.ResourceProc:
				from, to := st.Proc()
				e.text = fmt.Sprintf("M%d P%d %v→%v", ev.Thread(), st.Resource.Proc(), from, to)
			default:
				continue
			}
			a.events = append(a.events, e)
		case xtrace.EventRangeBegin, xtrace.EventRangeEnd:
			name := ev.Range().Name
			a.events = append(a.events, event{t: ev.Time(), thread: ev.Thread(), g: xtrace.NoGoroutine,
				text: fmt.Sprintf("M%d %v %s", ev.Thread(), ev.Kind(), name)})
			if strings.HasPrefix(name, "stop-the-world") {
				if ev.Kind() == xtrace.EventRangeBegin {
					open[name] = ev.Time()
				} else if b, ok := open[name]; ok {
					a.stws = append(a.stws, stw{b, ev.Time()})
					delete(open, name)
				}
			}
		}
	}
	if len(a.samples) == 0 {
		return nil, fmt.Errorf("analyse: no %q samples in the trace", bench.TraceCategory)
	}
	return a, nil
}

// window returns the events within [t0-before, end+after].
func (a *analysis) window(s sample, before, after time.Duration) []event {
	lo, hi := s.t0-xtrace.Time(before), s.end+xtrace.Time(after)
	i := sort.Search(len(a.events), func(i int) bool { return a.events[i].t >= lo })
	var out []event
	for ; i < len(a.events) && a.events[i].t <= hi; i++ {
		out = append(out, a.events[i])
	}
	return out
}

// classify names what delayed sample s (see the command's doc).
func (a *analysis) classify(s sample, slack time.Duration) string {
	for _, w := range a.stws {
		if w.begin < s.end && w.end > s.t0 {
			return "stw"
		}
	}
	var causes []string
	for _, e := range a.window(s, 0, 0) {
		if e.g == xtrace.NoGoroutine || e.g == a.host {
			continue
		}
		switch {
		case e.reason == "runtime.Gosched":
			causes = append(causes, "gosched")
		case e.from == xtrace.GoSyscall && time.Duration(e.t-s.t0) > slack:
			causes = append(causes, "thread")
		case e.from == xtrace.GoRunnable && e.to == xtrace.GoRunning:
			causes = append(causes, "p-wait")
		}
	}
	if len(causes) == 0 {
		return "other"
	}
	return causes[0]
}

func (a *analysis) report(w io.Writer, q float64, show int, slack time.Duration) {
	sorted := append([]sample(nil), a.samples...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].d < sorted[j].d })
	at := func(q float64) time.Duration { return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))].d }
	fmt.Fprintf(w, "%d samples: p50 %v p99 %v p99.9 %v max %v; %d stop-the-world pauses in the trace\n",
		len(sorted), at(0.5), at(0.99), at(0.999), sorted[len(sorted)-1].d, len(a.stws))
	cut := at(q)
	counts := map[string]int{}
	var slow []sample
	for _, s := range a.samples {
		if s.d > cut {
			slow = append(slow, s)
			counts[a.classify(s, slack)]++
		}
	}
	fmt.Fprintf(w, "%d samples above p%g (%v):", len(slow), 100*q, cut)
	for _, k := range []string{"stw", "gosched", "thread", "p-wait", "other"} {
		fmt.Fprintf(w, " %s %d", k, counts[k])
	}
	fmt.Fprintln(w)
	sort.Slice(slow, func(i, j int) bool { return slow[i].d > slow[j].d })
	for _, s := range slow[:min(show, len(slow))] {
		fmt.Fprintf(w, "\nsample of %v (%s); µs from the wake:\n", s.d, a.classify(s, slack))
		for _, e := range a.window(s, 5*time.Microsecond, 10*time.Microsecond) {
			fmt.Fprintf(w, "  %+9.1f %s\n", float64(e.t-s.t0)/1e3, e.text)
		}
	}
}
