package sched

import (
	"fmt"
	"slices"
	"strings"
)

// MaxListedReports is how many tasks SummarizeReports lists one by one; the
// rest are only counted.
const MaxListedReports = 10

// SummarizeReports describes the tasks of rs in bounded space: the count,
// then per engine the count in each state, then at most limit tasks (the
// lowest ids, as rs is sorted) one by one and how many more there are.
// Completed tasks are neither counted nor listed: they have ended, so they
// are not stuck. A shutdown that abandoned 3.5 million tasks thus prints
// one short line, not 175 MB.
func SummarizeReports(rs []TaskReport, limit int) string {
	type key struct {
		engine string
		state  State
	}
	counts := map[key]int{}
	var engines []string
	n := 0
	for _, r := range rs {
		if r.State == Completed {
			continue
		}
		k := key{r.Engine, r.State}
		if counts[k] == 0 && !slices.Contains(engines, r.Engine) {
			engines = append(engines, r.Engine)
		}
		counts[k]++
		n++
	}
	slices.Sort(engines)
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s", n, plural(n, "task"))
	for i, e := range engines {
		sep := " ("
		if i > 0 {
			sep = "; "
		}
		fmt.Fprintf(&b, "%sengine %s:", sep, e)
		first := true
		for st := Runnable; st < Completed; st++ {
			if c := counts[key{e, st}]; c > 0 {
				if !first {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, " %d %s", c, st)
				first = false
			}
		}
	}
	if len(engines) > 0 {
		b.WriteByte(')')
	}
	listed := 0
	for _, r := range rs {
		if r.State == Completed {
			continue
		}
		if listed == limit {
			fmt.Fprintf(&b, "; and %d more", n-listed)
			break
		}
		if listed == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(r.String())
		listed++
	}
	return b.String()
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
