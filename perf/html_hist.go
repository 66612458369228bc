package perf

import "fmt"

// histPlot is a latency scenario's sample distribution for the HTML
// report: per bucket of bench.HistBucket (10 per decade), the share of
// each column's samples, Jade and the baseline side by side, on a log
// time axis from the first to the last bucket holding a sample.
type histPlot struct {
	Bars  []latencyBar
	Ticks []histTick
	Width int
}

// histTick labels the time axis at a decade.
type histTick struct {
	X     int
	Label string
}

// histPlotOf builds the plot of h; nil when it holds no sample.
func histPlotOf(h *LatencyHist) *histPlot {
	if h == nil {
		return nil
	}
	lo, hi := -1, -1
	var nj, nb uint64
	for i := range h.LowerNs {
		if h.Jade[i]+h.Baseline[i] > 0 {
			if lo < 0 {
				lo = i
			}
			hi = i
		}
		nj, nb = nj+h.Jade[i], nb+h.Baseline[i]
	}
	if lo < 0 {
		return nil
	}
	share := func(c, n uint64) float64 {
		if n == 0 {
			return 0
		}
		return float64(c) / float64(n)
	}
	top := 0.0
	for i := lo; i <= hi; i++ {
		top = max(top, share(h.Jade[i], nj), share(h.Baseline[i], nb))
	}
	const left, axis, height = 60, 190, 170
	bw := min(12, max(2, 240/(hi-lo+1))) // one column's bar width
	p := &histPlot{Width: left + (hi-lo+1)*2*bw + 40}
	for i := lo; i <= hi; i++ {
		x := left + (i-lo)*2*bw
		for j, c := range []struct {
			n, of uint64
			color string
			who   string
		}{{h.Jade[i], nj, latSeries[0].color, "jade"}, {h.Baseline[i], nb, latSeries[1].color, "baseline"}} {
			s := share(c.n, c.of)
			hgt := int(s / top * height)
			if c.n > 0 {
				hgt = max(hgt, 1) // a lone outlier stays visible
			}
			p.Bars = append(p.Bars, latencyBar{X: x + j*bw, Y: axis - hgt, W: bw, H: hgt, Color: c.color,
				Label:    fmt.Sprintf("%s: %d of %d samples (%.2f%%)", c.who, c.n, c.of, 100*s),
				Quantile: "≥ " + fmtNs(float64(h.LowerNs[i]))})
		}
		if (i % 10) == 0 { // a decade: 100ns, 1µs, 10µs, ...
			p.Ticks = append(p.Ticks, histTick{X: x, Label: tickNs(float64(h.LowerNs[i]))})
		}
	}
	return p
}
