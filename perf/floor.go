package perf

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jadevm/jade/bench"
)

// Latency floors: in the same run as the latency rows, the bare cost of
// the mechanism each row depends on, on this machine — a futex wake
// between two OS threads pinned to different CPUs, an io_uring NOP round
// trip, a Go channel wake. On a VM whose vCPUs are shared, one thread
// waking another costs what the hypervisor makes it cost (tens of µs at
// p50 and milliseconds at p99 were measured on 2-vCPU VMs), so an absolute
// target there says more about the host than about Jade: a latency row's
// gate is its ratio to its floor. The absolute figures stay beside it.
//
// A steal detector runs beside each floor and each latency scenario: a
// thread spinning on the clock, whose gaps longer than stallGap are
// intervals in which it did not run — its vCPU taken by the hypervisor,
// or its CPU by another thread (the machine's /proc/stat steal time, read
// before and after, says how much was the hypervisor's). A floor counts
// the samples that overlap a gap; a latency row reports the gaps of its
// scenario, so a reader sees why a p99.9 moved. The spinner occupies a
// CPU while it runs: on a 2-CPU machine it competes with the measured
// threads, as much for the floor as for the row.

// stallGap is the least gap in the spinner's clock reads counted as a
// stall: a loop iteration takes tens of ns, a wake-up preemption by one
// of the measured threads a few µs.
const stallGap = 200 * time.Microsecond

// floorGate is the most a gated latency row may be of its floor's same
// quantile (wake_latency's p99 and p99.9 against the futex floor's).
const floorGate = 1.5

// Floor names.
const (
	FloorFutex = "futex"     // a futex wake between two pinned OS threads
	FloorNop   = "uring_nop" // an io_uring NOP round trip on a locked thread
	FloorChan  = "chan"      // a Go channel send to a parked goroutine
)

// Floor is one measured floor (the Report's Floors, and the floor rows).
type Floor struct {
	Name      string  `json:"name"`
	Mechanism string  `json:"mechanism"`
	N         int     `json:"n"`
	P50       float64 `json:"p50Ns"`
	P99       float64 `json:"p99Ns"`
	P999      float64 `json:"p999Ns"`
	Max       float64 `json:"maxNs"`
	// Stalled counts the samples that overlapped a stall the detector saw.
	Stalled int         `json:"stalledSamples"`
	Steal   *StealStats `json:"steal,omitempty"`
	Absent  string      `json:"absent,omitempty"`
}

// StealStats is what the steal detector saw during one measurement.
type StealStats struct {
	Gaps      int     `json:"gaps"`      // gaps of stallGap or more in the spinner's clock reads
	LongestNs float64 `json:"longestNs"` // the longest
	TotalNs   float64 `json:"totalNs"`   // their sum
	// StealMs is the machine's steal time over the measurement
	// (/proc/stat, all CPUs; -1 where not available).
	StealMs float64 `json:"stealMs"`
	// Stalled counts the samples that overlapped a gap (-1 where the
	// samples' instants were not kept: the Jade rows).
	Stalled int `json:"stalledSamples"`
}

// stealDetector is the spinner.
type stealDetector struct {
	stop  atomic.Bool
	done  chan struct{}
	base  time.Time
	gaps  [][2]int64 // [start, end) ns since base; the spinner's until done
	steal float64    // /proc/stat steal at the start (ms), -1 unknown
	procs int        // GOMAXPROCS before the spinner took one more
}

// startSteal starts a detector. The spinner gets a P of its own (one more
// than GOMAXPROCS until end), so that goroutines measured beside it keep
// theirs; do not change GOMAXPROCS while it runs.
func startSteal() *stealDetector {
	d := &stealDetector{done: make(chan struct{}), base: time.Now(), steal: procSteal()}
	d.procs = runtime.GOMAXPROCS(0)
	runtime.GOMAXPROCS(d.procs + 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer close(d.done)
		last := time.Since(d.base).Nanoseconds()
		for i := 0; ; i++ {
			now := time.Since(d.base).Nanoseconds()
			if now-last >= int64(stallGap) {
				d.gaps = append(d.gaps, [2]int64{last, now})
			}
			last = now
			if i&255 == 0 && d.stop.Load() {
				return
			}
		}
	}()
	return d
}

// end stops d and returns what it saw.
func (d *stealDetector) end() StealStats {
	d.stop.Store(true)
	<-d.done
	runtime.GOMAXPROCS(d.procs)
	st := StealStats{Gaps: len(d.gaps), StealMs: -1, Stalled: -1}
	for _, g := range d.gaps {
		l := float64(g[1] - g[0])
		st.TotalNs += l
		st.LongestNs = max(st.LongestNs, l)
	}
	if s := procSteal(); s >= 0 && d.steal >= 0 {
		st.StealMs = s - d.steal
	}
	return st
}

// add sums the detector's figures of two measurements.
func (st *StealStats) add(o StealStats) {
	st.Gaps += o.Gaps
	st.TotalNs += o.TotalNs
	st.LongestNs = max(st.LongestNs, o.LongestNs)
	if st.StealMs >= 0 && o.StealMs >= 0 {
		st.StealMs += o.StealMs
	} else {
		st.StealMs = -1
	}
}

// stalled counts the samples [start, start+dur) (instants as time.Time)
// that overlap one of d's gaps (d ended).
func (d *stealDetector) stalled(starts []time.Time, durs []time.Duration) int {
	n := 0
	for i, s := range starts {
		a := s.Sub(d.base).Nanoseconds()
		b := a + durs[i].Nanoseconds()
		j := sort.Search(len(d.gaps), func(k int) bool { return d.gaps[k][1] > a })
		if j < len(d.gaps) && d.gaps[j][0] < b {
			n++
		}
	}
	return n
}

// procSteal returns the steal time of all CPUs from /proc/stat in ms, or
// -1.
func procSteal() float64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return -1
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return -1
	}
	v, err := strconv.ParseFloat(f[8], 64)
	if err != nil {
		return -1
	}
	return v * 10 // USER_HZ = 100 on Linux
}

// measureFloor runs f (which returns each sample's start and duration)
// under a steal detector and summarises it.
func measureFloor(name, mech string, f func() ([]time.Time, []time.Duration, error)) Floor {
	d := startSteal()
	starts, durs, err := f()
	st := d.end()
	if err != nil {
		return Floor{Name: name, Mechanism: mech, Absent: err.Error()}
	}
	st.Stalled = d.stalled(starts, durs)
	l := bench.Summarize(durs)
	return Floor{Name: name, Mechanism: mech, N: l.N, P50: float64(l.P50), P99: float64(l.P99),
		P999: float64(l.P999), Max: float64(l.Max), Stalled: st.Stalled, Steal: &st}
}

// floorSamples is how many samples each floor takes.
func floorSamples(o *Options) int {
	if o.Quick {
		return 500
	}
	return 2000
}

// floors measures the floors once per run (the first scenario that needs
// them; Run adds their rows to the report).
func (o *Options) floors() []Floor {
	if o.floorCache == nil {
		n := floorSamples(o)
		o.floorCache = []Floor{
			measureFloor(FloorFutex, "futex wake between two OS threads pinned to different CPUs", func() ([]time.Time, []time.Duration, error) { return futexPingPong(n) }),
			measureFloor(FloorNop, "io_uring NOP submitted and reaped on one locked thread", func() ([]time.Time, []time.Duration, error) { return uringNops(n) }),
			measureFloor(FloorChan, "Go channel send to a parked goroutine", func() ([]time.Time, []time.Duration, error) { return chanWakes(n) }),
		}
	}
	return o.floorCache
}

// floor returns the floor named name, nil when it is absent.
func (o *Options) floor(name string) *Floor {
	for i, f := range o.floors() {
		if f.Name == name && f.Absent == "" {
			return &o.floorCache[i]
		}
	}
	return nil
}

// chanWakes: a goroutine parked on a channel receive, woken by a send;
// from before the send to the receiver's clock read.
func chanWakes(n int) ([]time.Time, []time.Duration, error) {
	ch, woke := make(chan struct{}), make(chan time.Time)
	go func() {
		for range n {
			<-ch
			woke <- time.Now()
		}
	}()
	starts, durs := make([]time.Time, 0, n), make([]time.Duration, 0, n)
	for range n {
		time.Sleep(50 * time.Microsecond) // the receiver parks
		t0 := time.Now()
		ch <- struct{}{}
		starts, durs = append(starts, t0), append(durs, (<-woke).Sub(t0))
	}
	return starts, durs, nil
}

// floorRows are the floors as rows of the table, the JSON and the HTML
// report: one per quantile, in the Jade column (no baseline, not gated).
func floorRows(fs []Floor) []Result {
	var rs []Result
	for _, f := range fs {
		name := "floor_" + f.Name
		if f.Absent != "" {
			rs = append(rs, Result{Name: name, Absent: f.Absent})
			continue
		}
		target := fmt.Sprintf("floor; %d/%d samples in stalls", f.Stalled, f.N)
		if f.Steal != nil && f.Steal.StealMs >= 0 {
			target += fmt.Sprintf(", steal %.0f ms", f.Steal.StealMs)
		}
		for _, q := range []struct {
			metric string
			v      float64
		}{{"p50 latency", f.P50}, {"p99 latency", f.P99}, {"p99.9 latency", f.P999}} {
			rs = append(rs, Result{Name: name, Metric: q.metric, Unit: "ns", Jade: q.v, Reps: 1,
				Target: target, Steal: f.Steal})
		}
	}
	return rs
}

// onFloor sets a latency row's floor figures: the floor's same quantile
// and the row's ratio to it.
func onFloor(r *Result, f *Floor) {
	if f == nil {
		return
	}
	var v float64
	switch r.Metric {
	case "p50 latency":
		v = f.P50
	case "p99 latency":
		v = f.P99
	case "p99.9 latency":
		v = f.P999
	default:
		return
	}
	if v > 0 {
		r.Floor, r.FloorNs, r.FloorRatio = f.Name, v, r.Jade/v
	}
}
