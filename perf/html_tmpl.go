package perf

import "html/template"

// htmlTmpl is the report page. Every chart is an <svg class="chart ...">;
// text that must fit a column carries data-maxw (its room in px) for the
// browser check (make report-check).
var htmlTmpl = template.Must(template.New("r").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>jade perf {{.Run.Date.Format "2006-01-02"}}</title>
<style>
body{font:14px sans-serif;margin:2em;color:#222}
table{border-collapse:collapse}td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:right;white-space:nowrap}
td:first-child,th:first-child,td.l,th.l{text-align:left}.absent{color:#999}td.target{white-space:normal;min-width:14em}
table.summary td,table.summary th{text-align:left;white-space:normal}
td.pass{color:#2e7d32;font-weight:bold}td.fail{color:#c62828;font-weight:bold}td.miss{color:#ef8c00;font-weight:bold}td.reported{color:#78909c}
.key{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}
svg{display:block;margin:8px 0 16px}
</style>
</head><body>
<section id="s-summary"><h1>jade perf</h1>
<table class="summary" id="summary">
<tr><th>outcome</th><td><b>{{.Tally.Pass}} pass</b>, <b>{{.Tally.Fail}} FAIL</b>, {{.Tally.Reported}} reported without a gate, {{.Tally.Absent}} absent</td></tr>
<tr><th>run</th><td>{{.Size}}, {{.Reps}} per measurement (medians reported)</td></tr>
<tr><th>date</th><td>{{if .Run.Date.IsZero}}unknown{{else}}{{.Run.Date.Format "2006-01-02 15:04 UTC"}}{{end}}</td></tr>
<tr><th>commit</th><td>{{if .Run.Commit}}{{.Run.Commit}}{{else}}unknown{{end}}</td></tr>
<tr><th>machine</th><td>{{.M.CPU}} — cpuid: {{.M.Cores}} cores, {{.M.Threads}} threads, {{.M.Cache}} B lines; {{.M.CPUs}} CPUs usable — {{.M.Go}} — {{.M.Kernel}} — backend {{.M.Backend}} — workers {{.M.Workers}}</td></tr>
<tr><th>peers</th><td>{{.PeerVersions}}</td></tr>
</table>
<p>Ratio = baseline ÷ Jade for time and bytes, Jade ÷ baseline for rates: above 1 Jade is better. Pass/fail is information, not a CI gate; a row's gate is its target, which may be a multiple, the best peer, or a latency floor rather than the ratio shown.</p>
<p>Colours:{{range .Outcomes}}<span class="key" style="background:{{.Color}}"></span>{{.Means}}{{end}}</p>
</section>
<section id="s-results"><h2>Results</h2>
<table id="results"><tr><th>scenario</th><th class="l">metric</th><th>jade</th><th>baseline</th><th>ratio</th>{{if $.Peers}}<th>tokio</th><th>beam</th><th class="l">best</th><th>vs best</th>{{end}}{{if $.Floors}}<th>vs floor</th>{{end}}<th class="l">target</th><th>pass</th></tr>
{{range .Rows}}{{if .Absent}}<tr class="absent"><td>{{.Name}}</td><td class="l" colspan="{{$.Cols}}">absent: {{.Absent}}</td></tr>
{{else}}<tr class="{{.Class}}"><td>{{.Name}}</td><td class="l">{{.Metric}}</td><td>{{.JadeS}}</td><td>{{.BaseS}}</td><td>{{.RatioS}}</td>{{if $.Peers}}<td>{{.TokioS}}</td><td>{{.BeamS}}</td><td class="l">{{.Best}}</td><td>{{.VsBestS}}</td>{{end}}{{if $.Floors}}<td>{{.FloorS}}</td>{{end}}<td class="l target">{{.Target}}</td><td class="{{.Class}}">{{.PassS}}</td></tr>
{{end}}{{end}}</table>
{{if .Peers}}<h2>Peers</h2>
<p>Each peer is timed in its own process with its own clock; vs best = the best of goroutines, Tokio and BEAM ÷ Jade.</p>
<ul>{{range .Peers}}<li>{{.Peer}}: {{if .Skipped}}skipped: {{.Skipped}}{{else}}{{.Version}}{{end}}</li>{{end}}</ul>
<ul>{{range .PeerNotes}}<li>{{.}}</li>{{end}}{{range .RowNotes}}<li>* {{.}}</li>{{end}}</ul>
{{end}}
</section>
<section id="s-ratios"><h2>Ratios (log scale; the dark line is 1×, right of it Jade is better)</h2>
{{with .Ratios}}<svg class="chart ratios" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" xmlns="http://www.w3.org/2000/svg" font-size="12" font-family="sans-serif">
{{range .Ticks}}<g class="tick" data-value="{{.Value}}"><line x1="{{.X}}" y1="16" x2="{{.X}}" y2="{{$.Ratios.Height}}" stroke="#e0e0e0"/><text x="{{.X}}" y="12" text-anchor="middle">{{.Label}}</text></g>
{{end}}{{range .Bars}}<g class="row {{.Class}}" data-ratio="{{.Ratio}}"><title>{{.Title}}</title><text class="label" x="{{$.Ratios.LabelW}}" dx="-8" y="{{.Y}}" dy="14" text-anchor="end" data-maxw="{{$.Ratios.LabelRoom}}">{{.Label}}</text><rect class="bar" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="18" fill="{{.Color}}"/><text class="value" x="{{$.Ratios.ValueX}}" y="{{.Y}}" dy="14" data-maxw="{{$.Ratios.ValueW}}">{{.RatioS}}  {{.Word}}</text></g>
{{end}}<line x1="{{.X1}}" y1="16" x2="{{.X1}}" y2="{{.Height}}" stroke="#333" stroke-width="2"/>
</svg>
{{else}}<p>No row has a ratio to chart.</p>
{{end}}
</section>
<section id="s-latency"><h2>Latency distributions (log time axis, a decade a grid line)</h2>
{{range .Lat}}<h3>{{.Name}}</h3>
<svg class="chart latency" data-scenario="{{.Name}}" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" xmlns="http://www.w3.org/2000/svg" font-size="11" font-family="sans-serif">
{{range .Legend}}<rect x="{{.X}}" y="4" width="12" height="12" fill="{{.Color}}"/><text x="{{.X}}" dx="16" y="14">{{.Label}}</text>
{{end}}{{$p := .}}{{range .Ticks}}<g class="tick" data-value="{{.Value}}"><line x1="{{$p.PlotX0}}" y1="{{.Y}}" x2="{{$p.Width}}" y2="{{.Y}}" stroke="#e0e0e0"/><text x="{{$p.PlotX0}}" dx="-6" y="{{.Y}}" dy="4" text-anchor="end" data-maxw="{{$p.PlotX0}}">{{.Label}}</text></g>
{{end}}<line x1="{{.PlotX0}}" y1="{{.AxisY}}" x2="{{.Width}}" y2="{{.AxisY}}" stroke="#333"/>
{{range .Bars}}<g class="bar" data-series="{{.Series}}" data-quantile="{{.Quantile}}" data-value="{{.Value}}"><title>{{.Quantile}}: {{.Label}}</title><rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" fill="{{.Color}}"/><text x="{{.X}}" dx="{{.W}}" y="{{.Y}}" dy="-3" font-size="10" text-anchor="end" data-maxw="{{.W}}">{{.ValueS}}</text></g>
{{end}}{{range .Groups}}<text class="group" x="{{.X}}" y="{{$p.AxisY}}" dy="16" text-anchor="middle">{{.Label}}</text>
{{end}}</svg>
{{with .Hist}}<p>Samples by latency (blue Jade, amber baseline; 10 buckets a decade; bar height: share of each column's samples; hover for counts)</p>
<svg class="chart hist" width="{{.Width}}" height="215" viewBox="0 0 {{.Width}} 215" xmlns="http://www.w3.org/2000/svg" font-size="11" font-family="sans-serif">
<line x1="60" y1="190" x2="{{.Width}}" y2="190" stroke="#333"/>
{{range .Bars}}<rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" fill="{{.Color}}"><title>{{.Quantile}}: {{.Label}}</title></rect>
{{end}}{{range .Ticks}}<line x1="{{.X}}" y1="190" x2="{{.X}}" y2="195" stroke="#333"/><text x="{{.X}}" y="207" text-anchor="middle">{{.Label}}</text>
{{end}}</svg>
{{end}}{{else}}<p>No latency scenario was run.</p>
{{end}}</section>
</body></html>
`))
