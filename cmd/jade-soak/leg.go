//go:build linux

package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// snapshot is what the soak measures of the server.
type snapshot struct {
	fds  int
	rss  int64
	heap heap
}

// shapeResult is one shape's tally over every round of a leg.
type shapeResult struct {
	name string
	t    tally
	dur  time.Duration
}

// legReport is the outcome of one leg.
type legReport struct {
	leg            leg
	dur            time.Duration
	start          int // descriptors right after the server started
	before, after  snapshot
	peakFDs        int
	peakRSS        int64
	shapes         []*shapeResult
	total          tally
	violations     []string
	heapTol        float64
	measuredBefore bool
	measuredAfter  bool
}

// violate records a failed check.
func (r *legReport) violate(format string, args ...any) {
	r.violations = append(r.violations, fmt.Sprintf(format, args...))
}

// shape returns the result line for name, adding it on first use.
func (r *legReport) shape(name string) *shapeResult {
	for _, s := range r.shapes {
		if s.name == name {
			return s
		}
	}
	s := &shapeResult{name: name}
	r.shapes = append(r.shapes, s)
	return s
}

// record times f and adds its tally to the shape's line.
func (r *legReport) record(mu *sync.Mutex, name string, f func() *tally) {
	start := time.Now()
	t := f()
	mu.Lock()
	defer mu.Unlock()
	s := r.shape(name)
	s.t.add(t)
	s.dur += time.Since(start)
}

// runLeg starts a server for l, warms it up, runs the shapes c.repeat
// times and checks descriptors, heap and bytes.
func runLeg(c *config, legIdx int, l leg) *legReport {
	r := &legReport{leg: l, heapTol: c.heapTolerance}
	start := time.Now()
	defer func() { r.dur = time.Since(start) }()
	fmt.Printf("\n== leg %s: JADE_POLLER=%s JADE_WORKERS=%d\n", l, l.poller, l.workers)
	s, err := startServer(c, l)
	if err != nil {
		r.violate("%v", err)
		return r
	}
	defer s.stop()
	if r.start, err = s.fds(); err != nil {
		r.violate("%v", err)
		return r
	}
	d := &dialer{addr: s.addr, sem: make(chan struct{}, c.dialers)}
	var mu sync.Mutex
	// peak records the server's descriptors and RSS while n connections
	// are open, after waiting up to a second for it to accept them all.
	peak := func(n int) {
		fds, _ := s.fds()
		for end := time.Now().Add(time.Second); fds < r.start+n && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			fds, _ = s.fds()
		}
		rss, _ := s.rss()
		mu.Lock()
		r.peakFDs, r.peakRSS = max(r.peakFDs, fds), max(r.peakRSS, rss)
		mu.Unlock()
	}
	// The first c.warmup rounds warm the server up: every shape at full
	// scale, so that the pools and tables the peak needs exist before the
	// first measurement. With two workers one round is not enough: each
	// worker's op table, Exec pool and spares reach their working size
	// only once the peak has landed on each of them (the heap after GC
	// keeps growing for two or three rounds, then holds).
	warm := max(c.warmup, 1)
	last := warm + c.repeat - 1
	for round := 0; round <= last; round++ {
		failed := r.failures()
		if !r.round(c, s, d, &mu, legIdx*64+round, round < warm, peak) {
			return r
		}
		if r.failures() > failed && max(round, warm) < last {
			// More rounds against a server that drops connections cost
			// minutes of timeouts and tell nothing new; one measured round
			// still runs after a failed warm-up.
			last = max(round, warm)
			fmt.Printf("  round %d had failed connections: stopping after round %d\n", round, last)
		}
		if round < warm-1 {
			continue
		}
		var snap snapshot
		want := r.start
		if round >= warm {
			want = r.before.fds
		}
		if !r.measure(s, &snap, want, c.settle) {
			return r
		}
		if c.profiles != "" && (round == warm-1 || round == last) {
			when := "before"
			if round >= warm {
				when = "after"
			}
			path := filepath.Join(c.profiles, fmt.Sprintf("%s-%d-%s.pb.gz", l.poller, l.workers, when))
			if err := s.saveHeap(path); err != nil {
				fmt.Printf("  %v\n", err)
			}
		}
		if round == warm-1 {
			r.before = snap
			r.measuredBefore = true
			fmt.Printf("  after the warm-up (%d rounds): %d fds, RSS %s, heap in use %s\n", warm, snap.fds, mib(snap.rss), mib(snap.heap.inuse))
			continue
		}
		r.after = snap
		r.measuredAfter = true
		fmt.Printf("  after round %d:     %d fds, RSS %s, heap in use %s (%+.1f%%)\n",
			round-warm+1, snap.fds, mib(snap.rss), mib(snap.heap.inuse), pct(snap.heap.inuse, r.before.heap.inuse))
	}
	r.check()
	return r
}

// round runs every shape once; false (and a violation) if the server
// exited. The warm-up's tallies go to one line of their own.
func (r *legReport) round(c *config, s *server, d *dialer, mu *sync.Mutex, seed int, warm bool, peak func(n int)) bool {
	name := func(format string, args ...any) string {
		if warm {
			return "warm-up (every shape once)"
		}
		return fmt.Sprintf(format, args...)
	}
	r.record(mu, name("a concurrent %d × %d round trips", c.conns, c.rounds), func() *tally {
		return concurrent(d, seed, c.conns, c.rounds, peak)
	})
	// Slowloris peers trickle while the other shapes run: they must not
	// hold the others up.
	var slow sync.WaitGroup
	slow.Add(1)
	go func() {
		defer slow.Done()
		r.record(mu, name("c slowloris %d × 1 B/s for %s", c.slow, c.slowFor), func() *tally {
			return slowloris(d, seed, c.slow, c.slowFor)
		})
	}()
	r.record(mu, name("b churn %d", c.churn), func() *tally { return churn(d, seed, c.churn, 64) })
	r.record(mu, name("d reset %d", c.rst), func() *tally { return reset(d, seed, c.rst, 64) })
	r.record(mu, name("e half-close %d", c.half), func() *tally { return halfClose(d, seed, c.half, 64) })
	slow.Wait()
	if err := s.alive(); err != nil {
		r.violate("%v", err)
		return false
	}
	return true
}

// failures is the number of failed connections so far.
func (r *legReport) failures() int64 {
	var n int64
	for _, s := range r.shapes {
		n += s.t.failed.Load()
	}
	return n
}

// measure takes a snapshot once the server's descriptors settled to want
// (or c.settle passed); false (and a violation) if it cannot.
func (r *legReport) measure(s *server, into *snapshot, want int, settle time.Duration) bool {
	if err := s.alive(); err != nil {
		r.violate("%v", err)
		return false
	}
	var err error
	// The heap first: its HTTP connection must be closed by the time the
	// descriptors are counted.
	if into.heap, err = s.heap(); err != nil {
		r.violate("%v", err)
		return false
	}
	if into.fds, err = s.settledFDs(want, settle); err != nil {
		r.violate("%v", err)
		return false
	}
	if into.rss, err = s.rss(); err != nil {
		r.violate("%v", err)
		return false
	}
	return true
}

// check compares the snapshots and the tallies.
func (r *legReport) check() {
	b, a := r.before, r.after
	if a.fds > b.fds {
		r.violate("descriptors: %d open after the rounds, %d before (%d not closed)", a.fds, b.fds, a.fds-b.fds)
	}
	if lim := float64(b.heap.inuse) * (1 + r.heapTol); float64(a.heap.inuse) > lim {
		r.violate("heap in use after GC grew %s → %s (%+.1f%%, allowed %+.0f%%)",
			mib(b.heap.inuse), mib(a.heap.inuse), pct(a.heap.inuse, b.heap.inuse), 100*r.heapTol)
	}
	for _, s := range r.shapes {
		r.total.add(&s.t)
		if n := s.t.failed.Load(); n > 0 {
			r.violate("%s: %d connections failed (%d more not started): %s", s.name, n, s.t.skipped.Load(), strings.Join(s.t.errs, "; "))
		}
		if n := s.t.lost(); n != 0 && s.t.failed.Load() == 0 {
			r.violate("%s: %d bytes sent did not come back", s.name, n)
		}
	}
}

// print writes the leg's figures.
func (r *legReport) print(w io.Writer) {
	for _, s := range r.shapes {
		t := &s.t
		fmt.Fprintf(w, "  %-42s %6d conns  sent %s  echoed %s", s.name, t.conns.Load(), mb(t.sent.Load()), mb(t.echoed.Load()))
		if ab := t.abandoned.Load(); ab > 0 {
			fmt.Fprintf(w, "  abandoned %s", mb(ab))
		}
		fmt.Fprintf(w, "  lost %d B  %d failed", t.lost(), t.failed.Load())
		if sk := t.skipped.Load(); sk > 0 {
			fmt.Fprintf(w, "  %d skipped", sk)
		}
		fmt.Fprintf(w, "  %.1f s\n", s.dur.Seconds())
	}
	if r.measuredAfter {
		b, a := r.before, r.after
		fmt.Fprintf(w, "  fds    %d at start, %d → %d (%d with the concurrent connections open)\n", r.start, b.fds, a.fds, r.peakFDs)
		fmt.Fprintf(w, "  RSS    %s → %s (%s with the concurrent connections open)\n", mib(b.rss), mib(a.rss), mib(r.peakRSS))
		fmt.Fprintf(w, "  heap   in use after GC %s → %s (%+.1f%%), allocated %s → %s\n",
			mib(b.heap.inuse), mib(a.heap.inuse), pct(a.heap.inuse, b.heap.inuse), mib(b.heap.alloc), mib(a.heap.alloc))
	}
	fmt.Fprintf(w, "  bytes  sent %d, echoed %d, abandoned by resets %d, lost %d\n",
		r.total.sent.Load(), r.total.echoed.Load(), r.total.abandoned.Load(), r.total.lost())
	for _, v := range r.violations {
		fmt.Fprintf(w, "  FAIL   %s\n", v)
	}
	if len(r.violations) == 0 {
		fmt.Fprintf(w, "  ok     %.1f s\n", r.dur.Seconds())
	}
}

// summary writes one line per leg.
func summary(w io.Writer, rs []*legReport) {
	fmt.Fprintf(w, "%-9s %-12s %-22s %-22s %-26s %s\n", "leg", "fds", "RSS MiB (at peak)", "heap in use MiB", "bytes sent/echoed", "result")
	for _, r := range rs {
		verdict := "ok"
		if len(r.violations) > 0 {
			verdict = fmt.Sprintf("FAIL (%d)", len(r.violations))
		}
		b, a := r.before, r.after
		fmt.Fprintf(w, "%-9s %-12s %-22s %-22s %-26s %s\n", r.leg,
			fmt.Sprintf("%d→%d", b.fds, a.fds),
			fmt.Sprintf("%.1f→%.1f (%.1f)", fmib(b.rss), fmib(a.rss), fmib(r.peakRSS)),
			fmt.Sprintf("%.2f→%.2f (%+.1f%%)", fmib(b.heap.inuse), fmib(a.heap.inuse), pct(a.heap.inuse, b.heap.inuse)),
			fmt.Sprintf("%d/%d", r.total.sent.Load()-r.total.abandoned.Load(), r.total.echoed.Load()),
			verdict)
	}
}

func fmib(n int64) float64 { return float64(n) / (1 << 20) }
func mib(n int64) string   { return fmt.Sprintf("%.2f MiB", fmib(n)) }

// mb writes a byte count in B, kB or MB.
func mb(n int64) string {
	switch {
	case n < 10_000:
		return fmt.Sprintf("%d B", n)
	case n < 10_000_000:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// pct is the change from b to a in percent.
func pct(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * (float64(a) - float64(b)) / float64(b)
}
