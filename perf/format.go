package perf

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// num formats a figure in its unit for people: durations (unit "ns") in
// ns, µs, ms or s, bytes in B, kB, MB or GB, rates (req/s, rt/s, units/s)
// and counts with k, M or G, always to about three significant digits
// ("1.19 ms", not "1.19e+06 ns"). NaN and ±Inf print as "–".
func num(v float64, unit string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	switch unit {
	case "ns":
		return fmtNs(v)
	case "B":
		return scaled(v, 1000, []string{"B", "kB", "MB", "GB"}, " ")
	case "CPUs":
		return fmt.Sprintf("%.2f CPUs", v)
	case "":
		return scaled(v, 1000, []string{"", "k", "M", "G"}, "")
	}
	return scaled(v, 1000, []string{"", "k", "M", "G"}, "") + " " + unit
}

// fmtNs formats a duration given in ns.
func fmtNs(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return sig3(v/1e9) + " s"
	case a >= 1e6:
		return sig3(v/1e6) + " ms"
	case a >= 1e3:
		return sig3(v/1e3) + " µs"
	}
	return sig3(v) + " ns"
}

// scaled divides v by step while it is step or more (and units remain)
// and appends the unit reached: after a space where sep is " " or where it
// is the first unit, else directly ("488 B", "2.16 kB"; "0.25", "45.2k").
func scaled(v, step float64, units []string, sep string) string {
	i := 0
	for math.Abs(v) >= step && i < len(units)-1 {
		v /= step
		i++
	}
	switch {
	case units[i] == "":
		return sig3(v)
	case i > 0 && sep == "":
		return sig3(v) + units[i]
	}
	return sig3(v) + " " + units[i]
}

// sig3 prints x to about three significant digits without an exponent
// for the magnitudes a report shows.
func sig3(x float64) string {
	a := math.Abs(x)
	switch {
	case x == 0:
		return "0"
	case a >= 100:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(x, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(x, 'f', 2, 64)
	case a >= 0.001:
		return strconv.FormatFloat(x, 'f', 3, 64)
	}
	return strconv.FormatFloat(x, 'g', 2, 64)
}

// tickNs formats a round duration for an axis: "1 ms", "10 µs", not
// "1.00 ms".
func tickNs(v float64) string {
	s := fmtNs(v)
	num, unit, ok := strings.Cut(s, " ")
	if !ok || !strings.Contains(num, ".") {
		return s
	}
	num = strings.TrimRight(strings.TrimRight(num, "0"), ".")
	return num + " " + unit
}
