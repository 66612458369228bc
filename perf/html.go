package perf

import (
	"fmt"
	"html/template"
	"io"
	"math"
)

// WriteHTML writes a self-contained report (no external assets, opens
// offline): the machine, the results table, and a log-scale bar chart of
// each ratio against its target line.
func WriteHTML(w io.Writer, r *Report) error {
	type row struct {
		Result
		JadeS, BaseS, RatioS, PassS string
		Bar, Y                      int
		Color                       string
	}
	var rows []row
	y := 0
	for _, s := range r.Scenarios {
		rw := row{Result: s}
		if s.Absent == "" {
			rw.JadeS, rw.BaseS, rw.RatioS = num(s.Jade, s.Unit), num(s.Baseline, s.Unit), fmt.Sprintf("%.2f×", s.Ratio)
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
			rw.Y = y
			y += 22
		}
		rows = append(rows, rw)
	}
	return htmlTmpl.Execute(w, map[string]any{"M": r.Machine, "Rows": rows, "H": y + 10})
}

var htmlTmpl = template.Must(template.New("r").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>jade perf</title>
<style>body{font:14px sans-serif;margin:2em}table{border-collapse:collapse}td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:right}td:first-child,th:first-child,td.l{text-align:left}.absent{color:#999}</style>
</head><body>
<h1>jade perf</h1>
<p>{{.M.CPU}} — cpuid: {{.M.Cores}} cores, {{.M.Threads}} threads, {{.M.Cache}} B lines; {{.M.CPUs}} CPUs usable — {{.M.Go}} — {{.M.Kernel}} — backend {{.M.Backend}} — workers {{.M.Workers}}</p>
<p>Ratio = baseline ÷ Jade for time and bytes (above 1: Jade is better). Pass/fail is information, not a gate.</p>
<table><tr><th>scenario</th><th>metric</th><th>jade</th><th>baseline</th><th>ratio</th><th>target</th><th>pass</th></tr>
{{range .Rows}}{{if .Absent}}<tr class="absent"><td>{{.Name}}</td><td class="l" colspan="6">absent: {{.Absent}}</td></tr>
{{else}}<tr><td>{{.Name}}</td><td class="l">{{.Metric}}</td><td>{{.JadeS}}</td><td>{{.BaseS}}</td><td>{{.RatioS}}</td><td class="l">{{.Target}}</td><td>{{.PassS}}</td></tr>
{{end}}{{end}}</table>
<h2>Ratios (log scale; the line is 1×)</h2>
<svg width="900" height="{{.H}}" xmlns="http://www.w3.org/2000/svg" font-size="12">
<line x1="380" y1="0" x2="380" y2="{{.H}}" stroke="#333"/>
{{range .Rows}}{{if not .Absent}}<text x="0" y="{{.Y}}" dy="15">{{.Name}} {{.Metric}}</text><rect x="180" y="{{.Y}}" width="{{.Bar}}" height="18" fill="{{.Color}}"/><text x="{{.Bar}}" y="{{.Y}}" dx="185" dy="14">{{.RatioS}}</text>
{{end}}{{end}}</svg>
<p>Latency distributions appear here once the latency scenarios (wake_latency, fairness, sleep_lateness) land.</p>
</body></html>
`))
