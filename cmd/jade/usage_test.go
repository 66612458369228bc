package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUsageMap: `jade -h` is the map: it names the flags most runs need
// (perf --html, run --drain-timeout, --engine-config, --max-memory,
// --task-stats), and every flag it names under a subcommand is one that
// subcommand's -h lists; each subcommand's -h exits 0 with an example.
func TestUsageMap(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, exitSuccess, run([]string{"-h"}, &out, &errb))
	m := out.String()
	for _, f := range []string{"--html", "--drain-timeout", "--engine-config", "--max-memory", "--task-stats", "--debug-addr", "--jade-cpuprofile"} {
		require.Contains(t, m, f)
	}
	helps := map[string]string{}
	for _, sub := range []string{"run", "asm", "perf"} {
		var o, e bytes.Buffer
		require.Equal(t, exitSuccess, run([]string{sub, "-h"}, &o, &e), "%s -h", sub)
		helps[sub] = e.String()
		require.Contains(t, helps[sub], "Example", "%s -h", sub)
		require.Contains(t, helps[sub], "  jade "+sub+" ", "%s -h shows a command line", sub)
	}
	flagRE := regexp.MustCompile(`(?:^|[\s\[,])--?([a-z][a-z-]*)`)
	sub, checked := "", 0
	for _, l := range strings.Split(m, "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "jade" {
			sub = f[1]
		}
		if _, ok := helps[sub]; !ok || strings.HasPrefix(l, "signals") || strings.HasPrefix(l, "exit") {
			continue
		}
		for _, g := range flagRE.FindAllStringSubmatch(flagPart(l), -1) {
			require.Regexp(t, `(?m)^  -`+regexp.QuoteMeta(g[1])+`\b`, helps[sub], "jade -h names %s -%s", sub, g[1])
			checked++
		}
	}
	require.Greater(t, checked, 20, "flags checked")
}

// flagPart is the part of a line of the map before its description (two
// spaces or more after the flags).
func flagPart(l string) string {
	t := strings.TrimLeft(l, " ")
	if i := strings.Index(t, "   "); i >= 0 {
		return t[:i]
	}
	return t
}
