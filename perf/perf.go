// Package perf is the side-by-side performance harness behind `jade perf`:
// each scenario measures a Jade workload and its Go (or gopher-lua)
// baseline in the same run, at the same parallelism, with the bodies of
// package bench, and reports the ratio against each scenario's target.
// Pass/fail is information for people, never a CI gate. A scenario whose
// capability has not landed yet is reported as absent, never faked.
//
// # Compatibility
//
// This is an implementation package of the Jade runtime, with no
// compatibility promise between versions: its API changes whenever the
// runtime needs it to. A Go host imports the root package,
// github.com/jadevm/jade, whose API and program model are what the
// module's version promises.
package perf

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/klauspost/cpuid/v2"

	"github.com/jadevm/jade/internal/iosys"
)

// Result is one measured (or absent) scenario metric.
type Result struct {
	Name     string  `json:"name"`
	Metric   string  `json:"metric"`
	Unit     string  `json:"unit"`
	Jade     float64 `json:"jade"`
	Baseline float64 `json:"baseline"`
	// Ratio is baseline/jade for lower-is-better units (time, bytes), so
	// above 1 means Jade is better.
	Ratio  float64 `json:"ratio"`
	Target string  `json:"target"`
	Pass   *bool   `json:"pass"`             // nil when absent or not gated
	Absent string  `json:"absent,omitempty"` // why the scenario is not measured
	Reps   int     `json:"reps"`
	// Tokio and Beam are the peers' figures for the row (--peers; nil
	// where the row has no peer shape or the peer did not run). Best
	// names the lowest of the baseline ("goroutines") and the peers, and
	// BestRatio is best/jade.
	Tokio     *PeerValue `json:"tokio,omitempty"`
	Beam      *PeerValue `json:"beam,omitempty"`
	Best      string     `json:"best,omitempty"`
	BestRatio float64    `json:"bestRatio,omitempty"`
	// Hist is the sample distribution behind a scenario's latency rows,
	// on its first (p50) row; nil where the samples were not kept (wrk).
	Hist *LatencyHist `json:"hist,omitempty"`
	// Floor names the floor a latency row depends on (floor.go), FloorNs
	// is that floor's same quantile and FloorRatio the row's Jade figure
	// over it; a gated row's Pass is on that ratio where the floor was
	// measured. Steal is what the steal detector saw during the
	// scenario's Jade measurements (and, on a floor row, the floor's).
	Floor      string      `json:"floor,omitempty"`
	FloorNs    float64     `json:"floorNs,omitempty"`
	FloorRatio float64     `json:"floorRatio,omitempty"`
	Steal      *StealStats `json:"steal,omitempty"`
	// Incomparable marks a row whose two columns count different things
	// (fairness's hog progress): its Ratio is printed, never charted.
	Incomparable bool `json:"incomparable,omitempty"`
}

// LatencyHist is a latency scenario's samples over all repetitions,
// counted by bench.HistBucket for Jade and the baseline (the histogram
// plot of the HTML report).
type LatencyHist struct {
	LowerNs  []int64  `json:"lowerNs"` // each bucket's lower bound
	Jade     []uint64 `json:"jade"`
	Baseline []uint64 `json:"baseline"`
}

// Machine describes where the run happened.
type Machine struct {
	CPU     string `json:"cpu"`
	Cores   int    `json:"cores"`
	Threads int    `json:"threads"`
	Cache   int    `json:"cacheLine"`
	CPUs    int    `json:"cpus"` // logical CPUs this process may use (runtime.NumCPU)
	Go      string `json:"go"`
	Kernel  string `json:"kernel"`
	Backend string `json:"backend"`
	Workers int    `json:"workers"`
}

// Report is the JSON document written by --json.
type Report struct {
	Machine   Machine  `json:"machine"`
	Scenarios []Result `json:"scenarios"`
	// Peers and PeerNotes (--peers only): which peers ran, and how their
	// shapes correspond to the harness's.
	Peers     []PeerRun `json:"peers,omitempty"`
	PeerNotes []string  `json:"peerNotes,omitempty"`
	// Floors are the latency floors measured in this run (floor.go), also
	// listed as floor_* rows.
	Floors []Floor `json:"floors,omitempty"`
	// Run is when and how the report was made.
	Run RunInfo `json:"run"`
}

// Options configure a run.
type Options struct {
	Quick     bool     // about a third of the default sizes
	Scenarios []string // names to run; empty: all
	Reps      int      // repetitions per measurement (default 3); medians are reported
	Progress  io.Writer
	// EchoProc is the command that runs bench.EchoProcMain in a child
	// process (cmd/jade: the executable and "echoproc"); without it
	// echo_proc is reported absent.
	EchoProc []string
	// HTTPProc is the command that runs bench.HTTPProcMain in a child
	// process (cmd/jade: the executable and "httpproc"); without it http
	// and http_mixed are reported absent.
	HTTPProc []string
	// Syscalls names echo_proc's system-call counter: SyscallsAuto (the
	// default when empty), SyscallsStrace, SyscallsPerf or SyscallsNone.
	Syscalls string
	// Peers runs the Tokio and BEAM peers (bench/peers) after the
	// scenarios and adds their columns to the rows they have shapes for.
	Peers bool
	// PeersRoot is the repository root holding bench/peers (default: found
	// at or above the working directory).
	PeersRoot string

	floorCache []Floor // measured once per run (floors)
}

// Scenario is one named measurement.
type Scenario struct {
	Name string
	// Run measures and returns one or more results (nil error) or an error.
	Run func(o *Options) ([]Result, error)
	// Absent, when set, says which capability is missing.
	Absent string
}

// Run runs the selected scenarios in the fixed order of Scenarios().
func Run(o Options) (*Report, error) {
	if o.Reps <= 0 {
		o.Reps = 3
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	all := Scenarios()
	want := map[string]bool{}
	for _, n := range o.Scenarios {
		want[n] = true
	}
	known := map[string]bool{}
	for _, s := range all {
		known[s.Name] = true
	}
	for n := range want {
		if !known[n] {
			return nil, fmt.Errorf("perf: unknown scenario %q (known: %s)", n, strings.Join(Names(), ", "))
		}
	}
	rep := &Report{Machine: DescribeMachine(1), Run: runInfo(&o)}
	for i, s := range all {
		if len(want) > 0 && !want[s.Name] {
			continue
		}
		if s.Absent != "" {
			fmt.Fprintf(o.Progress, "[%d/%d] %s: absent (%s)\n", i+1, len(all), s.Name, s.Absent)
			rep.Scenarios = append(rep.Scenarios, Result{Name: s.Name, Absent: s.Absent})
			continue
		}
		fmt.Fprintf(o.Progress, "[%d/%d] %s ...", i+1, len(all), s.Name)
		t0 := time.Now()
		rs, err := s.Run(&o)
		if err != nil {
			fmt.Fprintf(o.Progress, " error: %v\n", err)
			return rep, fmt.Errorf("perf: %s: %w", s.Name, err)
		}
		fmt.Fprintf(o.Progress, " %.1fs\n", time.Since(t0).Seconds())
		rep.Scenarios = append(rep.Scenarios, rs...)
	}
	if o.floorCache != nil {
		// A latency row's floor is in the report even where the floors
		// scenario was not selected.
		rep.Floors = o.floorCache
		if len(want) > 0 && !want["floors"] {
			rep.Scenarios = append(floorRows(o.floorCache), rep.Scenarios...)
		}
	}
	if o.Peers {
		runPeers(&o, rep)
	}
	return rep, nil
}

// Names lists the scenario names in order.
func Names() []string {
	var ns []string
	for _, s := range Scenarios() {
		ns = append(ns, s.Name)
	}
	return ns
}

// DescribeMachine reports the CPU (klauspost/cpuid), Go and kernel.
func DescribeMachine(workers int) Machine {
	return Machine{
		CPU: strings.TrimSpace(cpuid.CPU.BrandName), Cores: cpuid.CPU.PhysicalCores,
		Threads: cpuid.CPU.LogicalCores, Cache: cpuid.CPU.CacheLine, CPUs: runtime.NumCPU(),
		Go: runtime.Version(), Kernel: kernel(), Backend: ioBackend(), Workers: workers,
	}
}

// ioBackend names the completion backend a worker opens here (a ring is
// opened and closed on a locked thread, as a worker does).
func ioBackend() string {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b, err := iosys.Open(0)
	if err != nil {
		return "none (" + err.Error() + ")"
	}
	defer b.Close()
	return b.Name()
}

func kernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return runtime.GOOS
	}
	return runtime.GOOS + " " + strings.TrimSpace(string(b))
}

// WriteTable prints the report as a table.
func WriteTable(w io.Writer, r *Report) {
	m := r.Machine
	fmt.Fprintf(w, "machine: %s (cpuid: %d cores, %d threads, %d B lines; %d CPUs usable), %s, %s, workers %d\n",
		m.CPU, m.Cores, m.Threads, m.Cache, m.CPUs, m.Go, m.Kernel, m.Workers)
	fmt.Fprintf(w, "summary: %s\n\n", summaryLine(r))
	peers := len(r.Peers) > 0
	head := fmt.Sprintf("%-20s %-18s %14s %14s %8s", "scenario", "metric", "jade", "baseline", "ratio")
	if peers {
		head += fmt.Sprintf(" %14s %14s %-10s %8s", "tokio", "beam", "best", "vs best")
	}
	floors := false
	for _, s := range r.Scenarios {
		floors = floors || s.Floor != ""
	}
	if floors {
		head += fmt.Sprintf(" %14s", "vs floor")
	}
	fmt.Fprintf(w, "%s  %-24s %s\n", head, "target", "pass")
	for _, s := range r.Scenarios {
		if s.Absent != "" {
			fmt.Fprintf(w, "%-20s %-18s %14s %14s %8s  %-24s %s\n", s.Name, "-", "absent", "-", "-", "-", s.Absent)
			continue
		}
		pass := "-"
		if s.Pass != nil {
			pass = map[bool]string{true: "pass", false: "FAIL"}[*s.Pass]
		}
		base, ratio := num(s.Baseline, s.Unit), "-"
		if s.Baseline == 0 && s.Ratio == 0 { // a floor: no baseline
			base = "-"
		}
		if hasRatio(s) {
			ratio = fmt.Sprintf("%.2fx", s.Ratio)
		}
		line := fmt.Sprintf("%-20s %-18s %14s %14s %8s", s.Name, s.Metric, num(s.Jade, s.Unit), base, ratio)
		if peers {
			best, vs := "-", "-"
			if s.Best != "" {
				best, vs = s.Best, fmt.Sprintf("%.2fx", s.BestRatio)
			}
			line += fmt.Sprintf(" %14s %14s %-10s %8s", peerCell(s.Tokio, s.Unit), peerCell(s.Beam, s.Unit), best, vs)
		}
		if floors {
			line += fmt.Sprintf(" %14s", floorCell(s))
		}
		fmt.Fprintf(w, "%s  %-24s %s\n", line, s.Target, pass)
	}
	writePeerNotes(w, r)
}

// floorCell is a row's ratio to its floor ("1.20x futex"), or "-".
func floorCell(s Result) string {
	if s.Floor == "" {
		return "-"
	}
	return fmt.Sprintf("%.2fx %s", s.FloorRatio, s.Floor)
}

// hasRatio reports whether s's Ratio means something: both columns
// measured, above zero and finite, and counting the same thing. Rows
// without one (floors, a client's CPU, a count of zero, hog progress in
// different units) print "-" and are not charted.
func hasRatio(s Result) bool {
	return s.Absent == "" && !s.Incomparable && s.Jade > 0 && s.Baseline > 0 &&
		s.Ratio > 0 && !math.IsInf(s.Ratio, 0) && !math.IsNaN(s.Ratio)
}

// WriteJSON writes the report as JSON.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// median of measurements.
func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// timeOp measures f(n) reps times and returns the median ns per op.
func timeOp(o *Options, n int, f func(n int) error) (float64, error) {
	if o.Quick {
		n = n/3 + 1
	}
	if err := f(n/10 + 1); err != nil { // warm-up: caches, heap size, JIT-free but not cold
		return 0, err
	}
	var xs []float64
	for i := 0; i < o.Reps; i++ {
		t0 := time.Now()
		if err := f(n); err != nil {
			return 0, err
		}
		xs = append(xs, float64(time.Since(t0).Nanoseconds())/float64(n))
	}
	return median(xs), nil
}

// lowerBetter builds a result where lower is better; want is the minimum
// ratio baseline/jade the target asks for (0: not gated).
func lowerBetter(name, metric, unit string, jade, base, want float64, target string, reps int) Result {
	r := Result{Name: name, Metric: metric, Unit: unit, Jade: jade, Baseline: base, Target: target, Reps: reps}
	if jade > 0 {
		r.Ratio = base / jade
	}
	if want > 0 {
		p := r.Ratio >= want
		r.Pass = &p
	}
	return r
}
