package perf

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
)

// WriteHTML writes a self-contained report (no external assets, opens
// offline): the machine, the results table, and a log-scale bar chart of
// each ratio against its target line.
func WriteHTML(w io.Writer, r *Report) error {
	type row struct {
		Result
		JadeS, BaseS, RatioS, PassS string
		TokioS, BeamS, VsBestS      string
		FloorS                      string
		Bar, Y                      int
		Color                       string
	}
	var rows []row
	y := 0
	for _, s := range r.Scenarios {
		rw := row{Result: s, FloorS: floorCell(s)}
		if s.Absent == "" {
			rw.JadeS, rw.BaseS, rw.RatioS = num(s.Jade, s.Unit), num(s.Baseline, s.Unit), fmt.Sprintf("%.2f×", s.Ratio)
			if s.Baseline == 0 && s.Ratio == 0 { // a floor: no baseline
				rw.BaseS, rw.RatioS = "–", "–"
			}
			// log2 scale: 1× at 200 px, each doubling ±60 px.
			rw.Bar = int(math.Max(4, math.Min(560, 200+60*math.Log2(math.Max(s.Ratio, 1e-3)))))
			rw.Color = "#8a8"
			rw.PassS = "–"
			if s.Pass != nil {
				if *s.Pass {
					rw.PassS = "pass"
				} else {
					rw.PassS, rw.Color = "FAIL", "#c88"
				}
			}
			rw.TokioS, rw.BeamS, rw.VsBestS = peerCell(s.Tokio, s.Unit), peerCell(s.Beam, s.Unit), "–"
			if s.Best != "" {
				rw.VsBestS = fmt.Sprintf("%.2f×", s.BestRatio)
			}
			rw.Y = y
			y += 22
		}
		rows = append(rows, rw)
	}
	floors := false
	for _, s := range r.Scenarios {
		floors = floors || s.Floor != ""
	}
	cols := 6 // the cells an absent row spans: metric to pass
	if len(r.Peers) > 0 {
		cols += 4
	}
	if floors {
		cols++
	}
	return htmlTmpl.Execute(w, map[string]any{"M": r.Machine, "Rows": rows, "H": y + 10, "Lat": latencyPlots(r),
		"Floors": floors, "Cols": cols,
		"Peers": r.Peers, "PeerNotes": r.PeerNotes, "RowNotes": rowNotes(r)})
}

// latencyPlot is one scenario's latency distribution: its percentiles
// (p50, p99, p99.9, max) for Jade and the baseline on a log-scale y axis.
type latencyPlot struct {
	Name  string
	Bars  []latencyBar
	Ticks []latencyTick
	Hist  *histPlot // the samples' distribution, where they were kept
}

type latencyBar struct {
	X, Y, W, H int
	Color      string
	Label      string
	Quantile   string
}

type latencyTick struct {
	Y     int
	Label string
}

// latencyPlots builds one plot per scenario that reports latency rows.
func latencyPlots(r *Report) []latencyPlot {
	var order []string
	by := map[string][]Result{}
	for _, s := range r.Scenarios {
		if s.Absent == "" && strings.HasSuffix(s.Metric, "latency") {
			if _, ok := by[s.Name]; !ok {
				order = append(order, s.Name)
			}
			by[s.Name] = append(by[s.Name], s)
		}
	}
	const h, base = 200, 220        // plot height, y of the axis
	scale := func(ns float64) int { // 100 ns .. 100 ms on a log axis
		v := (math.Log10(math.Max(ns, 100)) - 2) / 4
		return int(math.Min(1, v) * h)
	}
	var plots []latencyPlot
	for _, name := range order {
		p := latencyPlot{Name: name}
		for _, res := range by[name] {
			if res.Hist != nil {
				p.Hist = histPlotOf(res.Hist)
			}
		}
		for _, t := range []float64{1e3, 1e4, 1e5, 1e6, 1e7} {
			p.Ticks = append(p.Ticks, latencyTick{Y: base - scale(t), Label: num(t, "ns")})
		}
		for i, res := range by[name] {
			q := strings.TrimSuffix(res.Metric, " latency")
			x := 70 + i*110
			for j, v := range []float64{res.Jade, res.Baseline} {
				color, who := "#68c", "jade"
				if j == 1 {
					color, who = "#ca6", "baseline"
				}
				hgt := scale(v)
				p.Bars = append(p.Bars, latencyBar{X: x + j*40, Y: base - hgt, W: 36, H: hgt, Color: color,
					Label: who + " " + num(v, "ns"), Quantile: q})
			}
		}
		plots = append(plots, p)
	}
	return plots
}

var htmlTmpl = template.Must(template.New("r").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>jade perf</title>
<style>body{font:14px sans-serif;margin:2em}table{border-collapse:collapse}td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:right}td:first-child,th:first-child,td.l{text-align:left}.absent{color:#999}</style>
</head><body>
<h1>jade perf</h1>
<p>{{.M.CPU}} — cpuid: {{.M.Cores}} cores, {{.M.Threads}} threads, {{.M.Cache}} B lines; {{.M.CPUs}} CPUs usable — {{.M.Go}} — {{.M.Kernel}} — backend {{.M.Backend}} — workers {{.M.Workers}}</p>
<p>Ratio = baseline ÷ Jade for time and bytes (above 1: Jade is better). Pass/fail is information, not a gate.</p>
<table><tr><th>scenario</th><th>metric</th><th>jade</th><th>baseline</th><th>ratio</th>{{if $.Peers}}<th>tokio</th><th>beam</th><th>best</th><th>vs best</th>{{end}}{{if $.Floors}}<th>vs floor</th>{{end}}<th>target</th><th>pass</th></tr>
{{range .Rows}}{{if .Absent}}<tr class="absent"><td>{{.Name}}</td><td class="l" colspan="{{$.Cols}}">absent: {{.Absent}}</td></tr>
{{else}}<tr><td>{{.Name}}</td><td class="l">{{.Metric}}</td><td>{{.JadeS}}</td><td>{{.BaseS}}</td><td>{{.RatioS}}</td>{{if $.Peers}}<td>{{.TokioS}}</td><td>{{.BeamS}}</td><td class="l">{{.Best}}</td><td>{{.VsBestS}}</td>{{end}}{{if $.Floors}}<td>{{.FloorS}}</td>{{end}}<td class="l">{{.Target}}</td><td>{{.PassS}}</td></tr>
{{end}}{{end}}</table>
{{if .Peers}}<h2>Peers</h2>
<p>Each peer is timed in its own process with its own clock; vs best = the best of goroutines, Tokio and BEAM ÷ Jade.</p>
<ul>{{range .Peers}}<li>{{.Peer}}: {{if .Skipped}}skipped: {{.Skipped}}{{else}}{{.Version}}{{end}}</li>{{end}}</ul>
<ul>{{range .PeerNotes}}<li>{{.}}</li>{{end}}{{range .RowNotes}}<li>* {{.}}</li>{{end}}</ul>
{{end}}
<h2>Ratios (log scale; the line is 1×)</h2>
<svg width="900" height="{{.H}}" xmlns="http://www.w3.org/2000/svg" font-size="12">
<line x1="380" y1="0" x2="380" y2="{{.H}}" stroke="#333"/>
{{range .Rows}}{{if not .Absent}}<text x="0" y="{{.Y}}" dy="15">{{.Name}} {{.Metric}}</text><rect x="180" y="{{.Y}}" width="{{.Bar}}" height="18" fill="{{.Color}}"/><text x="{{.Bar}}" y="{{.Y}}" dx="185" dy="14">{{.RatioS}}</text>
{{end}}{{end}}</svg>
<h2>Latency distributions (log scale; blue Jade, amber baseline)</h2>
{{range .Lat}}<h3>{{.Name}}</h3>
<svg width="560" height="250" xmlns="http://www.w3.org/2000/svg" font-size="11">
{{range .Ticks}}<line x1="60" y1="{{.Y}}" x2="540" y2="{{.Y}}" stroke="#eee"/><text x="0" y="{{.Y}}" dy="4">{{.Label}}</text>
{{end}}<line x1="60" y1="220" x2="540" y2="220" stroke="#333"/>
{{range .Bars}}<rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" fill="{{.Color}}"><title>{{.Quantile}}: {{.Label}}</title></rect><text x="{{.X}}" y="235">{{.Quantile}}</text>
{{end}}</svg>
{{with .Hist}}<p>Samples by latency (10 buckets a decade; bar height: share of each column's samples; hover for counts)</p>
<svg width="{{.Width}}" height="215" xmlns="http://www.w3.org/2000/svg" font-size="11" class="hist">
<line x1="60" y1="190" x2="{{.Width}}" y2="190" stroke="#333"/>
{{range .Bars}}<rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" fill="{{.Color}}"><title>{{.Quantile}}: {{.Label}}</title></rect>
{{end}}{{range .Ticks}}<line x1="{{.X}}" y1="190" x2="{{.X}}" y2="195" stroke="#333"/><text x="{{.X}}" y="207">{{.Label}}</text>
{{end}}</svg>
{{end}}{{else}}<p>No latency scenario was run.</p>
{{end}}
</body></html>
`))
