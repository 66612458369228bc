package perf

import (
	"math"
	"strings"
)

// latencyPlot is one scenario's latency percentiles (p50, p99, p99.9,
// max) as bars per series (Jade, the baseline, the peers that measured
// it, the floor the rows depend on) on a log time axis spanning whole
// decades around the data, so that 1 ms and 10 ms are a decade apart.
type latencyPlot struct {
	Name          string
	Width, Height int
	PlotX0        int // x of the axis
	Top, AxisY    int // y of the plot's top and of its axis (the lowest tick)
	Bars          []latencyBar
	Ticks         []latencyTick
	Groups        []latencyGroup
	Legend        []legendItem
	Hist          *histPlot // the samples' distribution, where they were kept
}

// latencyBar is one bar of a latency plot or of a histogram.
type latencyBar struct {
	X, Y, W, H int
	Color      string
	Label      string // the tooltip
	Quantile   string
	Series     string  // latency plots: jade, baseline, tokio, beam, floor
	Value      float64 // latency plots: ns
	ValueS     string  // latency plots: the value printed above the bar
}

type latencyTick struct {
	Y     int
	Value float64 // ns
	Label string
}

// latencyGroup labels one quantile's bars under the axis.
type latencyGroup struct {
	X     int // the centre
	Label string
}

type legendItem struct {
	X     int
	Color string
	Label string
}

// The latency plots' geometry.
const (
	latFont     = 11
	latValFont  = 10
	latPlotH    = 200
	latTop      = 40 // legend and value labels above the tallest bar
	latBarGap   = 4
	latGroupGap = 28
)

// latSeries are the series of a latency plot in their order and colours.
var latSeries = []struct{ name, color string }{
	{"jade", "#3b6fb6"}, {"baseline", "#d08c2a"}, {"tokio", "#8e5ea2"}, {"beam", "#2a9d8f"}, {"floor", "#757575"},
}

// seriesValue is s's figure for series k (0 where it has none).
func seriesValue(s Result, k string) float64 {
	floorRow := strings.HasPrefix(s.Name, "floor_")
	pv := func(p *PeerValue) float64 {
		if p == nil || !p.Measured {
			return 0
		}
		return p.Value
	}
	switch k {
	case "jade":
		if floorRow {
			return 0
		}
		return s.Jade
	case "baseline":
		return s.Baseline
	case "tokio":
		return pv(s.Tokio)
	case "beam":
		return pv(s.Beam)
	case "floor":
		if floorRow { // a floor row's figure is the floor itself
			return s.Jade
		}
		return s.FloorNs
	}
	return 0
}

// latencyPlots builds one plot per scenario that reports latency rows
// (the floors' included).
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
	var plots []latencyPlot
	for _, name := range order {
		if p, ok := latencyPlotOf(name, by[name]); ok {
			plots = append(plots, p)
		}
	}
	return plots
}

// latencyPlotOf builds the plot of one scenario's latency rows; false
// when none holds a figure above zero.
func latencyPlotOf(name string, rows []Result) (latencyPlot, bool) {
	p := latencyPlot{Name: name, Top: latTop, AxisY: latTop + latPlotH}
	for _, res := range rows {
		if res.Hist != nil {
			p.Hist = histPlotOf(res.Hist)
		}
	}
	// The series with a figure, and the range of all figures.
	var series []int
	lo, hi := math.Inf(1), math.Inf(-1)
	barW := 44
	for k, sr := range latSeries {
		has := false
		for _, res := range rows {
			if v := seriesValue(res, sr.name); v > 0 && !math.IsInf(v, 0) {
				has = true
				lo, hi = math.Min(lo, v), math.Max(hi, v)
				barW = max(barW, textW(fmtNs(v), latValFont)+4)
			}
		}
		if has {
			series = append(series, k)
		}
	}
	if len(series) == 0 {
		return p, false
	}
	dlo, dhi := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if dhi <= dlo {
		dhi = dlo + 1
	}
	y := func(v float64) int {
		return p.AxisY - int(math.Round((math.Log10(v)-dlo)/(dhi-dlo)*latPlotH))
	}
	labelW := 0
	for d := dlo; d <= dhi; d++ {
		v := math.Pow(10, d)
		t := latencyTick{Y: y(v), Value: v, Label: tickNs(v)}
		labelW = max(labelW, textW(t.Label, latFont))
		p.Ticks = append(p.Ticks, t)
	}
	p.PlotX0 = labelW + 14
	groupW := len(series)*(barW+latBarGap) - latBarGap
	x := p.PlotX0 + latGroupGap/2
	for _, res := range rows {
		q := strings.TrimSuffix(res.Metric, " latency")
		for i, k := range series {
			v := seriesValue(res, latSeries[k].name)
			if v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
				continue // no figure: no bar
			}
			top := y(v)
			p.Bars = append(p.Bars, latencyBar{X: x + i*(barW+latBarGap), Y: top, W: barW, H: p.AxisY - top,
				Color: latSeries[k].color, Series: latSeries[k].name, Value: v, ValueS: fmtNs(v), Quantile: q,
				Label: latSeries[k].name + " " + fmtNs(v)})
		}
		p.Groups = append(p.Groups, latencyGroup{X: x + groupW/2, Label: q})
		x += groupW + latGroupGap
	}
	floorName := ""
	for _, res := range rows {
		if res.Floor != "" {
			floorName = res.Floor + " floor"
		}
	}
	lx := p.PlotX0
	for _, k := range series {
		label := latSeries[k].name
		if latSeries[k].name == "floor" && floorName != "" && !strings.HasPrefix(name, "floor_") {
			label = floorName
		}
		p.Legend = append(p.Legend, legendItem{X: lx, Color: latSeries[k].color, Label: label})
		lx += 16 + textW(label, latFont) + 14
	}
	p.Width = max(x, lx) + 10
	p.Height = p.AxisY + 24
	return p, true
}
