package perf

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// PeerValue is one peer's figure for a report row.
type PeerValue struct {
	Value    float64 `json:"value"`
	Measured bool    `json:"measured"`       // false: Value means nothing, Note says why
	Note     string  `json:"note,omitempty"` // how the figure differs, or why it is missing
}

// PeerRun says whether a peer ran and with what.
type PeerRun struct {
	Peer    string `json:"peer"`
	Version string `json:"version,omitempty"`
	// BuildSeconds is the build's duration; 0 when the cached build was
	// current.
	BuildSeconds float64 `json:"buildSeconds"`
	Skipped      string  `json:"skipped,omitempty"` // why the peer did not run
}

// peerShape is a peer shape and the harness scenario whose rows it feeds,
// with the scenario's worker count and count (scenarios.go's n; quick: the
// count under --quick), and the one peer that has it (empty: every peer).
type peerShape struct {
	shape, scenario string
	workers         int
	n, quick        int
	only            string
}

// peerShapes mirror scenarios.go: the same counts and worker counts.
var peerShapes = []peerShape{
	{"spawn_join", "spawn_join", 1, 300_000, 300_000/3 + 1, ""},
	{"ping_pong", "ping_pong", 1, 500_000, 500_000/3 + 1, ""},
	{"yield", "yield", 1, 2_000_000, 2_000_000/3 + 1, ""},
	{"spawn_many", "spawn_many", mnWorkers, 5, 5/3 + 1, ""},
	{"chained_spawn", "chained_spawn", mnWorkers, 5, 5/3 + 1, ""},
	{"yield_many", "yield_many", mnWorkers, 5, 5/3 + 1, ""},
	{"parked", "parked_task_bytes", 1, 100_000, 30_000, ""},
	{"wake_latency", "wake_latency", 1, 1000, 300, ""},
	{"sleep_lateness", "sleep_lateness", 1, 300, 100, ""},
	{"fairness_timer", "fairness", mnWorkers, 500, 200, ""},
	{"chan_ping_pong", "chan_ping_pong", 1, chanPingPongN, chanPingPongN/3 + 1, ""},
	{"chan_ping_pong_w2", "chan_ping_pong", mnWorkers, chanPingPongN, chanPingPongN/3 + 1, ""},
	{"chan_stream", "chan_stream", 1, chanStreamN, chanStreamN/3 + 1, ""},
	{"chan_stream_w2", "chan_stream", mnWorkers, chanStreamN, chanStreamN/3 + 1, ""},
	{"chan_fan_in", "chan_fan_in", 1, chanFanInN, chanFanInN/3 + 1, ""},
	{"chan_fan_in_w2", "chan_fan_in", mnWorkers, chanFanInN, chanFanInN/3 + 1, ""},
	{"select4", "select4", 1, select4N, select4N/3 + 1, "tokio"},
}

// peerNames are the peers in column order.
var peerNames = []string{"tokio", "beam"}

// PeerCorrespondence says, shape by shape, what each peer runs and where
// it cannot match the harness; the report prints it under the table.
var PeerCorrespondence = []string{
	"spawn_join: tokio::spawn + JoinHandle.await / spawn + the child's result message, one at a time",
	"chained_spawn, spawn_many, yield_many: the same 10k chain (a oneshot at its end / a message; each link spawns the next detached: JoinHandle dropped, Jade's spawn _), 10k fan-out joined in order / results received in any order, 100 tasks x 1000 yields",
	"ping_pong: two tasks on two tokio::sync::Notify / two processes exchanging messages",
	"yield: tokio::task::yield_now / erlang:yield()",
	"parked_task_bytes: tasks awaiting one Notify, heap counted by a counting global allocator / processes in receive, erlang:memory(processes) (with the parent's pid list, 16 B each); parked_task_rss: the resident set",
	"workers: Tokio current_thread for 1 worker, worker_threads(N) otherwise; BEAM +S N:N; default settings otherwise (BEAM's scheduler busy-wait included)",
	"fairness_timer: workers+1 spinning hogs and a ticker sleeping to start+i x 1 ms; Tokio has no preemption, so its ticker starves and the run stops at a bound (ticks ms + 1 s); BEAM's timers have ms resolution (a sleep to a deadline rounds up to whole ms)",
	"wake_latency: Tokio: a thread outside the runtime notifies a waiting task, as the harness's host does; BEAM has no thread outside its schedulers: the waker is a process on the same scheduler, sleeping 1 ms between samples",
	"sleep_lateness: tokio::time::sleep(1 ms) (a 1 ms timer wheel) / receive after 1",
	"chan_ping_pong: the faster of two tokio::sync::mpsc channels of capacity 1 (Tokio has no rendezvous channel) and a request over mpsc answered on a oneshot (the peer's line names it) / two processes exchanging messages",
	"chan_stream: tokio::sync::mpsc of capacity 1,024 / a producer process sending to the consumer's mailbox (unbounded: BEAM has no bounded channel)",
	"chan_fan_in: 100 tasks sending on clones of one tokio::sync::mpsc Sender (capacity 1,024) / 100 processes sending to one mailbox; 1,000 messages each per round",
	"select4: tokio::select! (random branch order, as Go's select) over four mpsc Receivers, one filled before the clock starts; no BEAM shape (a receive matches messages, not channels)",
	"no peer: the other rows (timers, echo, http, fib30, idle wakeups, chan_buffered_bytes) have no peer shape",
}

// peerField maps a report row to the peer shape and field that feed it.
func peerField(r Result) (shape, field string, ok bool) {
	switch r.Name {
	case "spawn_join", "ping_pong", "yield", "spawn_many", "chained_spawn", "yield_many":
		return r.Name, "ns", true
	case "chan_ping_pong", "chan_stream", "chan_fan_in", "select4":
		return chanShape(r), "ns", true
	case "parked_task_bytes":
		return "parked", "heap_bytes", true
	case "parked_task_rss":
		return "parked", "rss_bytes", true
	case "wake_latency", "sleep_lateness", "fairness_timer":
		q := map[string]string{"p50 latency": "p50_ns", "p99 latency": "p99_ns", "p99.9 latency": "p999_ns", "max latency": "max_ns"}[r.Metric]
		return r.Name, q, q != ""
	}
	return "", "", false
}

// The target of the rows in bestPeerGated: at least as fast as the best
// peer, which is the goroutine baseline alone until the peers run.
const (
	targetBestPeer       = ">= best peer (min of goroutines, tokio, beam)"
	targetGoroutinesOnly = ">= best peer (goroutines; tokio, beam with --peers)"
)

// bestPeerGated are the rows gated on the best peer: on the goroutine
// baseline (ratio >= 1) alone, and on the best of it and the peers when
// they ran.
var bestPeerGated = map[string]bool{"spawn_join": true, "ping_pong": true, "yield": true,
	"spawn_many": true, "chained_spawn": true, "yield_many": true,
	"chan_ping_pong": true, "chan_stream": true, "chan_fan_in": true, "select4": true}

// peerFigure is one peer shape's figures over the repetitions.
type peerFigure struct {
	fields map[string][]float64
	ran    []int // latency shapes: samples per repetition
	n      int
	bound  float64
}

// runPeers builds the peers, runs the shapes of the scenarios in the
// report o.Reps times each and adds the peer columns to the report.
func runPeers(o *Options, rep *Report) {
	w := o.Progress
	want := map[string]bool{}
	for _, s := range rep.Scenarios {
		want[s.Name] = true
	}
	want["fairness"] = want["fairness"] || want["fairness_timer"]
	byWorkers := map[string]map[int][]string{}
	someShape := false
	for _, peer := range peerNames {
		byWorkers[peer] = map[int][]string{}
		for _, ps := range peerShapes {
			if want[ps.scenario] && (ps.only == "" || ps.only == peer) {
				n := ps.n
				if o.Quick {
					n = ps.quick
				}
				byWorkers[peer][ps.workers] = append(byWorkers[peer][ps.workers], fmt.Sprintf("%s=%d", ps.shape, n))
				someShape = true
			}
		}
	}
	if !someShape {
		fmt.Fprintf(w, "peers: none of the scenarios run has a peer shape\n")
		return
	}
	root := o.PeersRoot
	var err error
	if root == "" {
		root, err = FindPeersRoot(".")
	}
	figs := map[string]map[string]*peerFigure{}
	for _, peer := range peerNames {
		run := PeerRun{Peer: peer}
		if len(byWorkers[peer]) == 0 {
			continue // no shape of this peer among the scenarios run
		}
		figs[peer], run.Skipped, run.Version, run.BuildSeconds = measurePeer(o, root, err, peer, byWorkers[peer])
		if run.Skipped != "" {
			fmt.Fprintf(w, "peers: %s skipped: %s\n", peer, run.Skipped)
		}
		rep.Peers = append(rep.Peers, run)
	}
	applyPeers(rep, figs)
}

// measurePeer checks, builds and runs one peer and returns its figures, or
// why it was skipped.
func measurePeer(o *Options, root string, rootErr error, peer string, byWorkers map[int][]string) (map[string]*peerFigure, string, string, float64) {
	w := o.Progress
	if rootErr != nil {
		return nil, rootErr.Error(), "", 0
	}
	if err := peerTools(w, peer); err != nil {
		return nil, err.Error(), "", 0
	}
	fmt.Fprintf(w, "peers: %s: build ...", peer)
	pb, err := BuildPeer(root, peer)
	if err != nil {
		fmt.Fprintln(w, " failed")
		return nil, err.Error(), "", 0
	}
	if pb.Built > 0 {
		fmt.Fprintf(w, " built in %.1fs (%s)\n", pb.Built.Seconds(), pb.Version)
	} else {
		fmt.Fprintf(w, " cached (%s)\n", pb.Version)
	}
	figs := map[string]*peerFigure{}
	workers := make([]int, 0, len(byWorkers))
	for k := range byWorkers {
		workers = append(workers, k)
	}
	sort.Ints(workers)
	for _, k := range workers {
		for rep := 0; rep < o.Reps; rep++ {
			fmt.Fprintf(w, "peers: %s workers=%d rep %d/%d ...", peer, k, rep+1, o.Reps)
			t0 := time.Now()
			lines, err := RunPeer(pb, k, byWorkers[k], 5*time.Minute)
			if err != nil {
				fmt.Fprintln(w, " failed")
				return nil, err.Error(), pb.Version, pb.Built.Seconds()
			}
			fmt.Fprintf(w, " %.1fs\n", time.Since(t0).Seconds())
			for _, l := range lines {
				f := figs[l.Shape]
				if f == nil {
					f = &peerFigure{fields: map[string][]float64{}, n: l.N, bound: l.BoundMS}
					figs[l.Shape] = f
				}
				for k, v := range l.Fields() {
					f.fields[k] = append(f.fields[k], v)
				}
				if l.Ran != nil {
					f.ran = append(f.ran, *l.Ran)
				}
			}
		}
	}
	return figs, "", pb.Version, pb.Built.Seconds()
}

// value is a peer's figure for one field: the median over the
// repetitions that measured it, with a note where samples are missing.
func (f *peerFigure) value(field string) PeerValue {
	var note string
	short := 0
	for _, r := range f.ran {
		if r < f.n {
			short++
		}
	}
	if short > 0 {
		note = fmt.Sprintf("starved: in %d of %d reps fewer than %d samples within %.0f ms (ran %s)", short, len(f.ran), f.n, f.bound, intsString(f.ran))
	}
	xs := f.fields[field]
	if len(xs) == 0 {
		return PeerValue{Note: note}
	}
	return PeerValue{Value: median(xs), Measured: true, Note: note}
}

func intsString(xs []int) string {
	var s []string
	for _, x := range xs {
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, ", ")
}

// applyPeers fills the peer columns, the best of baseline and peers, and
// Jade's ratio to it; the rows in bestPeerGated (and parked_task_bytes,
// beside its absolute bound) are then gated on that ratio.
func applyPeers(rep *Report, figs map[string]map[string]*peerFigure) {
	for i := range rep.Scenarios {
		r := &rep.Scenarios[i]
		if r.Absent != "" {
			continue
		}
		shape, field, ok := peerField(*r)
		if !ok {
			continue
		}
		for _, peer := range peerNames {
			f := figs[peer][shape]
			if f == nil {
				continue
			}
			v := f.value(field)
			switch peer {
			case "tokio":
				r.Tokio = &v
			case "beam":
				r.Beam = &v
			}
		}
		if r.Tokio == nil && r.Beam == nil {
			continue
		}
		r.Best, r.BestRatio = bestOf(*r)
		if bestPeerGated[r.Name] {
			r.Target = targetBestPeer
			p := r.BestRatio >= 1
			r.Pass = &p
		}
		if r.Name == "parked_task_bytes" {
			r.Target = "<= 512 B, >= best peer"
			p := r.Jade <= 512 && r.BestRatio >= 1
			r.Pass = &p
		}
	}
	rep.PeerNotes = PeerCorrespondence
}

// bestOf returns the lowest of the baseline and the measured peers, by
// name, and the ratio best/jade (above 1: Jade is better than all).
func bestOf(r Result) (string, float64) {
	best, v := "goroutines", r.Baseline
	for _, c := range []struct {
		name string
		pv   *PeerValue
	}{{"tokio", r.Tokio}, {"beam", r.Beam}} {
		if c.pv != nil && c.pv.Measured && c.pv.Value < v {
			best, v = c.name, c.pv.Value
		}
	}
	if r.Jade <= 0 {
		return best, 0
	}
	return best, v / r.Jade
}

// writePeerNotes prints the peers that ran or were skipped and how the
// shapes correspond.
func writePeerNotes(w io.Writer, r *Report) {
	if len(r.Peers) == 0 {
		return
	}
	fmt.Fprintf(w, "\npeers (each timed in its own process with its own clock; ratio vs best = best of goroutines/tokio/beam ÷ jade):\n")
	for _, p := range r.Peers {
		if p.Skipped != "" {
			fmt.Fprintf(w, "  %s: skipped: %s\n", p.Peer, p.Skipped)
		} else {
			fmt.Fprintf(w, "  %s: %s\n", p.Peer, p.Version)
		}
	}
	for _, n := range r.PeerNotes {
		fmt.Fprintf(w, "  - %s\n", n)
	}
	for _, n := range rowNotes(r) {
		fmt.Fprintf(w, "  * %s\n", n)
	}
}

// rowNotes lists the peers' notes on single rows ("*" or "starved" in the
// table), once per peer, scenario and note.
func rowNotes(r *Report) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range r.Scenarios {
		for _, c := range []struct {
			name string
			pv   *PeerValue
		}{{"tokio", s.Tokio}, {"beam", s.Beam}} {
			if c.pv == nil || c.pv.Note == "" {
				continue
			}
			n := fmt.Sprintf("%s %s: %s", c.name, s.Name, c.pv.Note)
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}

// peerCell formats a peer column of the text table.
func peerCell(pv *PeerValue, unit string) string {
	switch {
	case pv == nil:
		return "-"
	case !pv.Measured && strings.HasPrefix(pv.Note, "starved"):
		return "starved"
	case !pv.Measured:
		return "n/a"
	}
	s := num(pv.Value, unit)
	if pv.Note != "" {
		s += "*"
	}
	return s
}
