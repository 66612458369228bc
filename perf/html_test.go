package perf

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fixture is perf/testdata/report_fixture.json (go run ./perf/internal/fixgen).
func fixture(t *testing.T) *Report {
	t.Helper()
	b, err := os.ReadFile("testdata/report_fixture.json")
	require.NoError(t, err)
	var r Report
	require.NoError(t, json.Unmarshal(b, &r))
	return &r
}

// svgNode is an element of a chart, parsed back from the page.
type svgNode struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Text     string     `xml:",chardata"`
	Children []svgNode  `xml:",any"`
}

func (n *svgNode) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func (n *svgNode) num(t *testing.T, name string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(n.attr(name), 64)
	require.NoError(t, err, "%s=%q of <%s>", name, n.attr(name), n.XMLName.Local)
	return v
}

// all returns the descendants of n (n included) that match f.
func (n *svgNode) all(f func(*svgNode) bool) []*svgNode {
	var out []*svgNode
	if f(n) {
		out = append(out, n)
	}
	for i := range n.Children {
		out = append(out, n.Children[i].all(f)...)
	}
	return out
}

func (n *svgNode) first(tag string) *svgNode {
	if m := n.all(func(c *svgNode) bool { return c.XMLName.Local == tag }); len(m) > 0 {
		return m[0]
	}
	return nil
}

func hasClass(n *svgNode, c string) bool {
	for _, f := range strings.Fields(n.attr("class")) {
		if f == c {
			return true
		}
	}
	return false
}

// charts parses every <svg class="chart KIND"> of page.
func charts(t *testing.T, page, kind string) []*svgNode {
	t.Helper()
	var out []*svgNode
	for _, m := range regexp.MustCompile(`(?s)<svg class="chart `+kind+`".*?</svg>`).FindAllString(page, -1) {
		var n svgNode
		require.NoError(t, xml.Unmarshal([]byte(m), &n), "a chart is not well-formed SVG:\n%s", m)
		out = append(out, &n)
	}
	return out
}

func render(t *testing.T, r *Report) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, WriteHTML(&b, r))
	return b.String()
}

// TestLatencyChartGeometry: a latency chart's ticks are decades placed
// monotonically (a larger value higher, the same distance a decade), each
// bar's top is where its value falls on that axis, 10 ms is drawn above
// 1 ms (no cap), and every value above a bar is its value in full.
func TestLatencyChartGeometry(t *testing.T) {
	rep := fixture(t)
	rep.Scenarios = append(rep.Scenarios, latencyResultsOf("ten_vs_one", []float64{1e6, 1e7, 3e7, 1e9}, []float64{1e7, 1e6, 100, 2e9})...)
	page := render(t, rep)
	cs := charts(t, page, "latency")
	require.Len(t, cs, 6, "the floors, wake_latency, fairness_timer, echo_proc_c1 and ten_vs_one")
	for _, c := range cs {
		name := c.attr("data-scenario")
		ticks := c.all(func(n *svgNode) bool { return hasClass(n, "tick") })
		require.GreaterOrEqual(t, len(ticks), 2, name)
		type tk struct{ v, y float64 }
		var ts []tk
		for _, g := range ticks {
			ts = append(ts, tk{g.num(t, "data-value"), g.first("line").num(t, "y1")})
			require.Equal(t, tickNs(ts[len(ts)-1].v), strings.TrimSpace(g.first("text").Text), "%s: tick label", name)
		}
		sort.Slice(ts, func(i, j int) bool { return ts[i].v < ts[j].v })
		step := ts[0].y - ts[1].y
		require.Greater(t, step, 0.0, "%s: a larger tick is drawn higher", name)
		for i := 1; i < len(ts); i++ {
			require.InDelta(t, 10, ts[i].v/ts[i-1].v, 1e-9, "%s: a tick a decade", name)
			require.InDelta(t, step, ts[i-1].y-ts[i].y, 1, "%s: decades equally spaced (log axis)", name)
		}
		// y of v on the ticks' axis.
		at := func(v float64) float64 { return ts[0].y - (math.Log10(v)-math.Log10(ts[0].v))*step }
		bars := c.all(func(n *svgNode) bool { return hasClass(n, "bar") })
		require.NotEmpty(t, bars, name)
		for _, b := range bars {
			v, r := b.num(t, "data-value"), b.first("rect")
			require.GreaterOrEqual(t, v, ts[0].v, "%s: the axis starts at or below every value", name)
			require.LessOrEqual(t, v, ts[len(ts)-1].v, "%s: the axis ends at or above every value", name)
			require.InDelta(t, at(v), r.num(t, "y"), 1, "%s: %s bar of %v drawn at its value", name, b.attr("data-series"), v)
			require.InDelta(t, ts[0].y, r.num(t, "y")+r.num(t, "height"), 0.5, "%s: bars stand on the axis", name)
			txt := b.first("text")
			require.Equal(t, fmtNs(v), txt.Text, "%s: the value above the bar, in full", name)
			require.LessOrEqual(t, textW(txt.Text, latValFont), int(txt.num(t, "data-maxw")), "%s: %q fits its bar", name, txt.Text)
		}
		if name == "ten_vs_one" || name == "fairness_timer" {
			top := map[string]float64{}
			for _, b := range bars {
				top[b.attr("data-quantile")+" "+b.attr("data-series")] = b.first("rect").num(t, "y")
			}
			if name == "ten_vs_one" {
				require.Less(t, top["p50 baseline"], top["p50 jade"], "10 ms drawn above 1 ms")
				require.Less(t, top["p99 jade"], top["p99 baseline"], "10 ms drawn above 1 ms")
				require.Less(t, top["max baseline"], top["max jade"], "2 s above 1 s")
			} else {
				require.Less(t, top["p99 baseline"]+step, top["p99 jade"], "38.8 ms more than a decade above 1.19 ms")
			}
		}
	}
}

// latencyResultsOf builds a scenario's four latency rows from figures.
func latencyResultsOf(name string, j, g []float64) []Result {
	var rs []Result
	for i, m := range []string{"p50 latency", "p99 latency", "p99.9 latency", "max latency"} {
		rs = append(rs, lowerBetter(name, m, "ns", j[i], g[i], 0, "reported", 1))
	}
	return rs
}

// TestRatioChartGeometryAndColours: the ratio chart's ticks grow left to
// right, a bar runs right of 1× where Jade is better and left where it is
// worse, every label is whole and fits its column; colours follow the
// gate (a reported row at 0.01× is grey, a FAIL row 32× ahead is orange,
// a FAIL row behind is red, a pass green), and rows without a meaningful
// ratio are not drawn.
func TestRatioChartGeometryAndColours(t *testing.T) {
	rep := fixture(t)
	page := render(t, rep)
	cs := charts(t, page, "ratios")
	require.Len(t, cs, 1)
	c := cs[0]
	var prev float64 = -1
	var x1 float64
	for _, g := range c.all(func(n *svgNode) bool { return hasClass(n, "tick") }) {
		v, x := g.num(t, "data-value"), g.first("line").num(t, "x1")
		require.Greater(t, x, prev, "ticks left to right by value")
		prev = x
		if v == 1 {
			x1 = x
		}
	}
	require.NotZero(t, x1, "a 1× tick")
	rows := map[string]*svgNode{}
	for _, g := range c.all(func(n *svgNode) bool { return hasClass(n, "row") }) {
		rows[g.first("text").Text] = g
	}
	labelled := map[string]bool{}
	for _, s := range rep.Scenarios {
		label := s.Name + " · " + s.Metric
		g := rows[label]
		if !hasRatio(s) {
			require.Nil(t, g, "%s: no meaningful ratio, not charted", label)
			continue
		}
		require.NotNil(t, g, "%s: charted, its label whole", label)
		labelled[label] = true
		lt, r := g.first("text"), g.first("rect")
		require.LessOrEqual(t, textW(lt.Text, ratioFont), int(lt.num(t, "data-maxw")), "%s: the label fits its column", label)
		require.GreaterOrEqual(t, lt.num(t, "x")+lt.num(t, "dx")-float64(textW(lt.Text, ratioFont)), 0.0, "%s: starts inside the chart", label)
		x, w := r.num(t, "x"), r.num(t, "width")
		switch {
		case s.Ratio > 1.05:
			require.InDelta(t, x1, x, 1, "%s: better, right of 1×", label)
		case s.Ratio < 0.95:
			require.InDelta(t, x1, x+w, 1, "%s: worse, left of 1×", label)
		}
		require.Equal(t, outcomeOf(s).Color, r.attr("fill"), label)
	}
	require.Len(t, labelled, len(rows))

	fill := func(label string) string { return rows[label].first("rect").attr("fill") }
	green, red, orange, grey := outcomes[0].Color, outcomes[1].Color, outcomes[2].Color, outcomes[3].Color
	require.Equal(t, grey, fill("wake_latency · p50 latency"), "reported at 0.01×: grey, not green")
	require.Equal(t, orange, fill("fairness_timer · p99 latency"), "FAIL while 32× ahead: orange, not red")
	require.Equal(t, red, fill("wake_latency · p99.9 latency"), "FAIL behind: red")
	require.Equal(t, red, fill("spawn_join · spawn+join"), "FAIL behind: red")
	require.Equal(t, green, fill("wake_latency · p99 latency"), "pass on its floor gate while behind the channel wake: green")
	require.Equal(t, green, fill("timer_insert_cancel · insert+cancel"))
	for _, l := range []string{"echo_proc_c1 · client CPU busy", "idle_wakeups · switches per process", "fairness_timer · hog progress", "floor_futex · p99 latency"} {
		require.Nil(t, rows[l], "%s: not charted", l)
	}
	require.Contains(t, page, `<td class="reported">–</td>`)
	require.Contains(t, page, `<td class="miss">FAIL</td>`)
	require.Contains(t, page, `<td class="fail">FAIL</td>`)
	require.Contains(t, page, `<td class="pass">pass</td>`)
}

// TestReportUnits: figures print in the unit a reader wants, with no
// exponent anywhere in the page's text.
func TestReportUnits(t *testing.T) {
	for _, c := range []struct {
		v    float64
		unit string
		want string
	}{
		{1.19e6, "ns", "1.19 ms"}, {38.8e6, "ns", "38.8 ms"}, {426, "ns", "426 ns"}, {64.4, "ns", "64.4 ns"},
		{20e3, "ns", "20.0 µs"}, {2.5e9, "ns", "2.50 s"}, {1.2e6, "ns", "1.20 ms"},
		{488, "B", "488 B"}, {2163, "B", "2.16 kB"}, {3.2e6, "B", "3.20 MB"},
		{45200, "rt/s", "45.2k rt/s"}, {46.5, "req/s", "46.5 req/s"}, {3.1e6, "units/s", "3.10M units/s"},
		{0.98, "CPUs", "0.98 CPUs"}, {0, "", "0"}, {0.02, "", "0.020"}, {2, "", "2.00"},
		{math.NaN(), "ns", "–"}, {math.Inf(1), "", "–"},
	} {
		require.Equal(t, c.want, num(c.v, c.unit), "%v %s", c.v, c.unit)
	}
	require.Equal(t, "1 ms", tickNs(1e6))
	require.Equal(t, "100 µs", tickNs(1e5))
	require.Equal(t, "10 s", tickNs(1e10))

	page := render(t, fixture(t))
	text := regexp.MustCompile(`(?s)<[^>]*>`).ReplaceAllString(page, " ")
	require.NotRegexp(t, `\d[eE][+-]\d`, text, "no exponent in what the page shows")
	require.Contains(t, text, "1.19 ms")
	require.Contains(t, text, "38.8 ms")
}

// TestReportSummary: the page and the table start with the outcomes, the
// run's size and reps, its date, commit and the peers' versions; the
// JSON keeps them.
func TestReportSummary(t *testing.T) {
	rep := fixture(t)
	page := render(t, rep)
	tl := tally(rep)
	require.Equal(t, Tally{Pass: 12, Fail: 5, Reported: 22, Absent: 2}, tl)
	for _, s := range []string{"<b>12 pass</b>, <b>5 FAIL</b>, 22 reported without a gate, 2 absent", "full, 3 reps",
		"2026-12-06 04:00 UTC", "bba949b0f1a2", "tokio 1.24.2 (rustc 1.63.0), Erlang/OTP 25 [erts-13.1.5]"} {
		require.Contains(t, page, s)
	}
	var tbl bytes.Buffer
	WriteTable(&tbl, rep)
	require.Contains(t, tbl.String(), "summary: 12 pass, 5 FAIL, 22 reported without a gate, 2 absent; full run, 3 reps; 2026-12-06 04:00 UTC; commit bba949b0f1a2; peers: tokio 1.24.2")
	rep.Run.Quick, rep.Peers = true, nil
	page = render(t, rep)
	require.Contains(t, page, "quick (--quick")
	require.Contains(t, page, "not run (--peers runs Tokio and BEAM)")
}
