package perf

import (
	"fmt"
	"io"
	"math"
)

// WriteHTML writes a self-contained report (no external assets, opens
// offline): a summary (outcomes, run size, date, commit, machine and
// peers), the results table, a chart of the ratios on a log axis around
// 1×, and per latency scenario its percentiles on a log time axis and,
// where the samples were kept, their distribution.
//
// Colours follow the gate, never the ratio alone: green where the row's
// gate passed, red where it failed with Jade behind the baseline drawn,
// orange where it failed with Jade ahead of it (the gate asks for more: a
// multiple, the best peer, or the floor), grey where the row is reported
// without a gate. Direction is position: a bar right of the 1× line is
// Jade better.
func WriteHTML(w io.Writer, r *Report) error {
	type row struct {
		Result
		JadeS, BaseS, RatioS, PassS string
		TokioS, BeamS, VsBestS      string
		FloorS                      string
		Class                       string
	}
	var rows []row
	for _, s := range r.Scenarios {
		rw := row{Result: s, FloorS: dash(floorCell(s))}
		if s.Absent == "" {
			rw.JadeS, rw.BaseS, rw.RatioS = num(s.Jade, s.Unit), num(s.Baseline, s.Unit), "–"
			if s.Baseline == 0 && s.Ratio == 0 { // a floor: no baseline
				rw.BaseS = "–"
			}
			if hasRatio(s) {
				rw.RatioS = fmt.Sprintf("%.2f×", s.Ratio)
			}
			o := outcomeOf(s)
			rw.PassS, rw.Class = o.Word, o.Class
			rw.TokioS, rw.BeamS, rw.VsBestS = dash(peerCell(s.Tokio, s.Unit)), dash(peerCell(s.Beam, s.Unit)), "–"
			if s.Best != "" {
				rw.VsBestS = fmt.Sprintf("%.2f×", s.BestRatio)
			}
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
	size := "full"
	if r.Run.Quick {
		size = "quick (--quick: about a third of the sizes)"
	}
	return htmlTmpl.Execute(w, map[string]any{"M": r.Machine, "Run": r.Run, "Size": size, "Reps": repsText(r.Run.Reps), "Tally": tally(r),
		"PeerVersions": peerVersions(r), "Rows": rows, "Ratios": ratioChartOf(r), "Lat": latencyPlots(r),
		"Floors": floors, "Cols": cols, "Outcomes": outcomes,
		"Peers": r.Peers, "PeerNotes": r.PeerNotes, "RowNotes": rowNotes(r)})
}

// outcome is how a row's gate came out, with its colour.
type outcome struct {
	Class, Word, Color, Means string
}

// outcomes in the legend's order.
var outcomes = []outcome{
	{"pass", "pass", "#2e7d32", "gate passed"},
	{"fail", "FAIL", "#c62828", "gate failed, Jade behind the baseline"},
	{"miss", "FAIL", "#ef8c00", "gate failed although Jade is ahead of the baseline (the gate asks for more)"},
	{"reported", "–", "#90a4ae", "reported, no gate"},
}

// outcomeOf classifies s by its gate and, for a failed gate, by the
// direction of its ratio.
func outcomeOf(s Result) outcome {
	switch {
	case s.Pass == nil:
		return outcomes[3]
	case *s.Pass:
		return outcomes[0]
	case hasRatio(s) && s.Ratio > 1:
		return outcomes[2]
	}
	return outcomes[1]
}

// ratioChart is the bar chart of the rows that have a ratio: each bar
// runs from the 1× line to the row's ratio on a log axis.
type ratioChart struct {
	Width, Height  int
	LabelW, PlotW  int // the label column's width; the plot's
	LabelRoom      int // the room for a label: the column less its margin
	X1             int // x of the 1× line
	Bars           []ratioBar
	Ticks          []ratioTick
	ValueX, ValueW int // the ratio-and-outcome column
}

type ratioBar struct {
	Y, X, W      int
	Label        string
	Ratio        float64
	RatioS, Word string
	Color, Class string
	Title        string
}

type ratioTick struct {
	X     int
	Value float64
	Label string
}

// Geometry shared by the charts and the tests: estimated text widths (a
// sans-serif face averages under 0.62 em a character; the browser check
// measures the real widths).
const (
	charEm     = 0.62
	ratioFont  = 12
	ratioRowH  = 22
	ratioPlotW = 480
	ratioTop   = 24 // room for the tick labels
)

// textW is the estimated width of s at font size px.
func textW(s string, px int) int {
	return int(math.Ceil(float64(len([]rune(s))) * charEm * float64(px)))
}

// ratioChartOf builds the ratio chart; nil when no row has a ratio.
func ratioChartOf(r *Report) *ratioChart {
	var rs []Result
	lo, hi := 1.0, 1.0
	for _, s := range r.Scenarios {
		if hasRatio(s) {
			rs = append(rs, s)
			lo, hi = math.Min(lo, s.Ratio), math.Max(hi, s.Ratio)
		}
	}
	if len(rs) == 0 {
		return nil
	}
	// Whole decades around the data, at least 0.1× to 10×.
	dlo := math.Min(-1, math.Floor(math.Log10(lo)))
	dhi := math.Max(1, math.Ceil(math.Log10(hi)))
	c := &ratioChart{PlotW: ratioPlotW}
	label := func(s Result) string { return s.Name + " · " + s.Metric }
	for _, s := range rs {
		c.LabelW = max(c.LabelW, textW(label(s), ratioFont)+16)
	}
	c.LabelRoom = c.LabelW - 8
	x := func(v float64) int {
		return c.LabelW + int(math.Round((math.Log10(v)-dlo)/(dhi-dlo)*float64(c.PlotW)))
	}
	c.X1 = x(1)
	for d := dlo; d <= dhi; d++ {
		v := math.Pow(10, d)
		c.Ticks = append(c.Ticks, ratioTick{X: x(v), Value: v, Label: ratioLabel(v)})
	}
	c.ValueX = c.LabelW + c.PlotW + 12
	for i, s := range rs {
		o := outcomeOf(s)
		if o.Class == "reported" {
			o.Word = "reported"
		}
		xe := x(s.Ratio)
		b := ratioBar{Y: ratioTop + i*ratioRowH, X: min(c.X1, xe), W: max(2, abs(xe-c.X1)), Label: label(s),
			Ratio: s.Ratio, RatioS: fmt.Sprintf("%.2f×", s.Ratio), Word: o.Word, Color: o.Color, Class: o.Class,
			Title: fmt.Sprintf("%s: %s vs %s; target %s", label(s), num(s.Jade, s.Unit), num(s.Baseline, s.Unit), s.Target)}
		c.Bars = append(c.Bars, b)
		c.ValueW = max(c.ValueW, textW(b.RatioS+"  "+b.Word, ratioFont)+8)
	}
	c.Width = c.ValueX + c.ValueW
	c.Height = ratioTop + len(rs)*ratioRowH + 8
	return c
}

// ratioLabel labels a decade of the ratio axis: "0.01×", "1×", "100×".
func ratioLabel(v float64) string {
	return fmt.Sprintf("%g×", v)
}

// dash turns the text table's "-" (no figure) into the page's "–".
func dash(s string) string {
	if s == "-" {
		return "–"
	}
	return s
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}
