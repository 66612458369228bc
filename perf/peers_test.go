package perf

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParsePeerOutput(t *testing.T) {
	out := strings.Join([]string{
		`{"peer":"tokio","shape":"spawn_join","workers":1,"n":300000,"ns":307.125}`,
		``,
		`=WARNING REPORT==== something the emulator said`,
		`{"peer":"tokio","shape":"parked","workers":1,"n":100000,"heap_bytes":192.7,"rss_bytes":-3.5}`,
		`{"peer":"tokio","shape":"fairness_timer","workers":2,"n":500,"ran":0,"bound_ms":1500,"hog_units_per_s":1272.5}`,
		`{"peer":"tokio","shape":"wake_latency","workers":1,"n":3,"ran":3,"p50_ns":18141,"p99_ns":183687,"p999_ns":4036412,"max_ns":4036412}`,
	}, "\n")
	lines, noise, err := ParsePeerOutput(strings.NewReader(out), "tokio")
	require.NoError(t, err)
	require.Equal(t, []string{"=WARNING REPORT==== something the emulator said"}, noise)
	require.Len(t, lines, 4)
	require.Equal(t, map[string]float64{"ns": 307.125}, lines[0].Fields())
	require.Equal(t, 1, lines[0].Workers)
	require.Equal(t, map[string]float64{"heap_bytes": 192.7, "rss_bytes": -3.5}, lines[1].Fields())
	require.Equal(t, 0, *lines[2].Ran)
	require.Empty(t, lines[2].Fields())
	require.Equal(t, 1500.0, lines[2].BoundMS)
	require.Equal(t, map[string]float64{"p50_ns": 18141, "p99_ns": 183687, "p999_ns": 4036412, "max_ns": 4036412}, lines[3].Fields())
}

func TestParsePeerOutputRejects(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{`{"peer":"beam","shape":"yield","workers":1,"n":5,"ns":1}`, `peer "beam", want "tokio"`},
		{`{"peer":"tokio","shape":"hop","workers":1,"n":5,"ns":1}`, `unknown shape "hop"`},
		{`{"peer":"tokio","shape":"yield","workers":0,"n":5,"ns":1}`, "both must be >= 1"},
		{`{"peer":"tokio","shape":"yield","workers":1,"n":5}`, "yield: no ns"},
		{`{"peer":"tokio","shape":"yield","workers":1,"n":5,"ns":-1}`, "ns = -1"},
		{`{"peer":"tokio","shape":"parked","workers":1,"n":5,"heap_bytes":1}`, "heap_bytes and rss_bytes are required"},
		{`{"peer":"tokio","shape":"sleep_lateness","workers":1,"n":5,"p50_ns":1}`, "ran missing"},
		{`{"peer":"tokio","shape":"sleep_lateness","workers":1,"n":5,"ran":6}`, "ran missing or outside"},
		{`{"peer":"tokio","shape":"sleep_lateness","workers":1,"n":5,"ran":5,"p50_ns":1}`, "percentiles are present exactly when samples are"},
		{`{"peer":"tokio","shape":"sleep_lateness","workers":1,"n":5,"ran":0,"max_ns":1}`, "percentiles are present exactly when samples are"},
		{`{"peer":"tokio","shape":"yield","workers":1,"n":5,"ns":1`, "unexpected end of JSON"},
	} {
		_, _, err := ParsePeerOutput(strings.NewReader("\n"+tc.line+"\n"), "tokio")
		require.ErrorContains(t, err, tc.want, tc.line)
		require.ErrorContains(t, err, "perf: tokio output line 2: ", tc.line)
	}
}

func TestTokioVersion(t *testing.T) {
	lock := "[[package]]\nname = \"pin-project-lite\"\nversion = \"0.2.9\"\n\n[[package]]\nname = \"tokio\"\nversion = \"1.24.2\"\ndependencies = [\n \"num_cpus\",\n]\n"
	v, err := TokioVersion([]byte(lock))
	require.NoError(t, err)
	require.Equal(t, "1.24.2", v)
	_, err = TokioVersion([]byte("[[package]]\nname = \"tokio-macros\"\nversion = \"1.7.0\"\n"))
	require.ErrorContains(t, err, "no tokio package")
}

// peerReport is a report with rows of both kinds: gated throughput rows, a
// latency row, the parked row and a row without a peer shape.
func peerReport() *Report {
	pass := true
	return &Report{Scenarios: []Result{
		lowerBetter("spawn_join", "spawn+join", "ns", 400, 350, 5, ">= 5x go+WaitGroup", 3),
		lowerBetter("yield", "yield", "ns", 60, 90, 5, ">= 5x runtime.Gosched", 3),
		lowerBetter("fairness_timer", "p99 latency", "ns", 2e5, 4e7, 0, "p99 <= 1/100 of goroutines' in every rep", 3),
		lowerBetter("parked_task_bytes", "bytes per waiter", "B", 500, 2100, 0, "<= 512 B", 3),
		{Name: "timers_1m", Metric: "ns per insert", Unit: "ns", Jade: 10, Baseline: 50, Ratio: 5, Target: "<= 1/4 of AfterFunc", Pass: &pass},
		{Name: "resp_ping", Absent: "redis-benchmark not installed"},
	}}
}

func figure(n int, ran []int, fields map[string][]float64) *peerFigure {
	return &peerFigure{fields: fields, ran: ran, n: n, bound: 1500}
}

func TestApplyPeers(t *testing.T) {
	rep := peerReport()
	applyPeers(rep, map[string]map[string]*peerFigure{
		"tokio": {
			"spawn_join":     figure(300000, nil, map[string][]float64{"ns": {300, 310, 320}}),
			"yield":          figure(2000000, nil, map[string][]float64{"ns": {170, 172, 175}}),
			"fairness_timer": figure(500, []int{0, 0, 0}, map[string][]float64{}),
			"parked":         figure(100000, nil, map[string][]float64{"heap_bytes": {190, 200, 195}, "rss_bytes": {1, 2, 3}}),
		},
		"beam": {
			"spawn_join":     figure(300000, nil, map[string][]float64{"ns": {1000, 1100, 1024}}),
			"fairness_timer": figure(500, []int{500, 500, 500}, map[string][]float64{"p99_ns": {1.1e6, 1.2e6, 1e6}}),
		},
	})
	sj, y, ft, pk, tm, abs := rep.Scenarios[0], rep.Scenarios[1], rep.Scenarios[2], rep.Scenarios[3], rep.Scenarios[4], rep.Scenarios[5]

	require.Equal(t, &PeerValue{Value: 310, Measured: true}, sj.Tokio)
	require.Equal(t, &PeerValue{Value: 1024, Measured: true}, sj.Beam)
	require.Equal(t, "tokio", sj.Best)
	require.InDelta(t, 310.0/400, sj.BestRatio, 1e-9)
	require.Equal(t, ">= best peer (min of goroutines, tokio, beam)", sj.Target)
	require.False(t, *sj.Pass)

	require.Nil(t, y.Beam, "no beam figure for yield: the column stays empty")
	require.Equal(t, "goroutines", y.Best)
	require.InDelta(t, 1.5, y.BestRatio, 1e-9)
	require.True(t, *y.Pass)

	require.False(t, ft.Tokio.Measured)
	require.Contains(t, ft.Tokio.Note, "starved: in 3 of 3 reps fewer than 500 samples within 1500 ms (ran 0, 0, 0)")
	require.Equal(t, &PeerValue{Value: 1.1e6, Measured: true}, ft.Beam)
	require.Equal(t, "beam", ft.Best)
	require.Equal(t, "p99 <= 1/100 of goroutines' in every rep", ft.Target, "latency gates stay as they were")
	require.Nil(t, ft.Pass)

	require.Equal(t, "tokio", pk.Best)
	require.Equal(t, "<= 512 B, >= best peer", pk.Target)
	require.False(t, *pk.Pass)

	require.Nil(t, tm.Tokio)
	require.Empty(t, tm.Best)
	require.Equal(t, "<= 1/4 of AfterFunc", tm.Target)
	require.Nil(t, abs.Tokio)
	require.Equal(t, PeerCorrespondence, rep.PeerNotes)
}

func TestPeerColumnsInReports(t *testing.T) {
	plain := peerReport()
	var tbl, js, page bytes.Buffer
	WriteTable(&tbl, plain)
	require.NotContains(t, tbl.String(), "tokio", "without --peers the table has no peer columns")
	require.NoError(t, WriteJSON(&js, plain))
	require.NotContains(t, js.String(), "tokio")
	require.NoError(t, WriteHTML(&page, plain))
	require.NotContains(t, page.String(), "<th>tokio</th>")

	rep := peerReport()
	rep.Peers = []PeerRun{{Peer: "tokio", Version: "tokio 1.24.2", BuildSeconds: 31}, {Peer: "beam", Skipped: "erl not found (package erlang-base)"}}
	applyPeers(rep, map[string]map[string]*peerFigure{"tokio": {
		"spawn_join":     figure(300000, nil, map[string][]float64{"ns": {300}}),
		"fairness_timer": figure(500, []int{0}, map[string][]float64{}),
	}})
	tbl.Reset()
	WriteTable(&tbl, rep)
	out := tbl.String()
	require.Contains(t, out, "vs best")
	require.Regexp(t, `spawn_join +spawn\+join +400 ns +350 ns +0\.88x +300 ns +- +tokio +0\.75x +>= best peer`, out)
	require.Regexp(t, `fairness_timer +p99 latency .* starved +- +goroutines`, out)
	require.Contains(t, out, "beam: skipped: erl not found (package erlang-base)")
	require.Contains(t, out, "* tokio fairness_timer: starved: in 1 of 1 reps")

	js.Reset()
	require.NoError(t, WriteJSON(&js, rep))
	var back Report
	require.NoError(t, json.Unmarshal(js.Bytes(), &back))
	require.Equal(t, 300.0, back.Scenarios[0].Tokio.Value)
	require.Equal(t, "tokio", back.Scenarios[0].Best)
	require.Equal(t, "erl not found (package erlang-base)", back.Peers[1].Skipped)

	page.Reset()
	require.NoError(t, WriteHTML(&page, rep))
	require.Contains(t, page.String(), "<th>tokio</th><th>beam</th><th class=\"l\">best</th><th>vs best</th>")
	require.Contains(t, page.String(), "<td>300 ns</td><td>–</td><td class=\"l\">tokio</td><td>0.75×</td>")
	require.Contains(t, page.String(), `colspan="10">absent: redis-benchmark`)
}

func TestFindPeersRoot(t *testing.T) {
	root, err := FindPeersRoot(".")
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(root, "bench", "peers", "tokio", "Cargo.toml"))
	_, err = FindPeersRoot(t.TempDir())
	require.ErrorContains(t, err, "no bench/peers at or above")
}

// TestPeersBuildAndRun builds both peers (a cold cargo build takes about
// 35 s on 2 vCPUs, so it runs only with JADE_PEERS=1), checks that a second
// build is the cached one, and runs every shape
// with small counts at 1 and 2 workers.
func TestPeersBuildAndRun(t *testing.T) {
	if os.Getenv("JADE_PEERS") != "1" {
		t.Skip("builds and runs the Tokio and BEAM peers: set JADE_PEERS=1 (needs erlang-base, librust-tokio-dev, cargo)")
	}
	root, err := FindPeersRoot(".")
	require.NoError(t, err)
	shapes := []string{"spawn_join=2000", "ping_pong=2000", "yield=2000", "spawn_many=1", "chained_spawn=1",
		"yield_many=1", "parked=2000", "wake_latency=20", "sleep_lateness=20", "fairness_timer=20",
		"chan_ping_pong=2000", "chan_ping_pong_w2=2000", "chan_stream=2000", "chan_stream_w2=2000",
		"chan_fan_in=1", "chan_fan_in_w2=1", "select4=2000"}
	for _, peer := range peerNames {
		t.Run(peer, func(t *testing.T) {
			shapes := peerShapesOf(peer, shapes)
			if err := peerTools(os.Stderr, peer); err != nil {
				t.Skipf("%s cannot run here: %v", peer, err)
			}
			pb, err := BuildPeer(root, peer)
			require.NoError(t, err)
			again, err := BuildPeer(root, peer)
			require.NoError(t, err)
			require.Zero(t, again.Built, "the second build is the cached one")
			for _, workers := range []int{1, 2} {
				lines, err := RunPeer(pb, workers, shapes, 2*time.Minute)
				require.NoError(t, err)
				require.Len(t, lines, len(shapes))
				for i, l := range lines {
					require.Equal(t, strings.SplitN(shapes[i], "=", 2)[0], l.Shape)
					require.Equal(t, workers, l.Workers)
					if l.Ran == nil || *l.Ran > 0 {
						require.NotEmpty(t, l.Fields(), "%s", l.Shape)
					}
				}
			}
		})
	}
}

// peerShapesOf keeps the SHAPE=COUNT arguments that peer has a shape for.
func peerShapesOf(peer string, args []string) []string {
	var out []string
	for _, a := range args {
		name := strings.SplitN(a, "=", 2)[0]
		keep := true
		for _, ps := range peerShapes {
			if ps.shape == name && ps.only != "" && ps.only != peer {
				keep = false
			}
		}
		if keep {
			out = append(out, a)
		}
	}
	return out
}

// TestChanPeerShapes: every channel row finds its peer shape at its
// worker count, and the shapes repeat the scenarios' counts.
func TestChanPeerShapes(t *testing.T) {
	byShape := map[string]peerShape{}
	for _, ps := range peerShapes {
		byShape[ps.shape] = ps
	}
	for _, tc := range []struct {
		row     Result
		shape   string
		workers int
		n       int
	}{
		{Result{Name: "chan_ping_pong", Metric: workersMetric("round trip", 1)}, "chan_ping_pong", 1, chanPingPongN},
		{Result{Name: "chan_ping_pong", Metric: workersMetric("round trip", mnWorkers)}, "chan_ping_pong_w2", mnWorkers, chanPingPongN},
		{Result{Name: "chan_stream", Metric: workersMetric("per msg", 1)}, "chan_stream", 1, chanStreamN},
		{Result{Name: "chan_stream", Metric: workersMetric("per msg", mnWorkers)}, "chan_stream_w2", mnWorkers, chanStreamN},
		{Result{Name: "chan_fan_in", Metric: workersMetric("per msg", 1)}, "chan_fan_in", 1, chanFanInN},
		{Result{Name: "chan_fan_in", Metric: workersMetric("per msg", mnWorkers)}, "chan_fan_in_w2", mnWorkers, chanFanInN},
		{Result{Name: "select4", Metric: "per select (4 cases, 1 ready)"}, "select4", 1, select4N},
	} {
		shape, field, ok := peerField(tc.row)
		require.True(t, ok, "%+v", tc.row)
		require.Equal(t, tc.shape, shape)
		require.Equal(t, "ns", field)
		ps := byShape[shape]
		require.Equal(t, tc.workers, ps.workers, shape)
		require.Equal(t, tc.n, ps.n, shape)
		require.True(t, bestPeerGated[tc.row.Name], shape)
		kind, ok := shapeKind(shape)
		require.True(t, ok && kind == "throughput", shape)
	}
	require.Equal(t, []string{"chan_ping_pong=1"}, peerShapesOf("beam", []string{"chan_ping_pong=1", "select4=1"}))
	_, _, ok := peerField(Result{Name: "chan_buffered_bytes", Metric: "bytes per buffered i64"})
	require.False(t, ok, "Go is the only peer of the memory row")
}
