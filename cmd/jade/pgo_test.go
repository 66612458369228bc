package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/require"
)

// TestPGOProfile: the profile `make build` optimises bin/jade with
// (pgo/jade.pgo, written by scripts/pgo.sh) is a CPU profile of the
// scheduler and the bus that leaves the VM loop out and every sample of
// which is in this module, as the script says.
func TestPGOProfile(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "pgo", "jade.pgo"))
	require.NoError(t, err)
	defer f.Close()
	p, err := profile.Parse(f)
	require.NoError(t, err)
	require.NotEmpty(t, p.Sample)
	seen := map[string]bool{}
	for _, s := range p.Sample {
		ours := false
		for _, loc := range s.Location {
			for _, ln := range loc.Line {
				name := ln.Function.Name
				require.NotRegexp(t, `vmloop\.\(\*Exec\)\.(Run|runNative)$`, name, "a sample inside the VM loop")
				if strings.HasPrefix(name, "github.com/jadevm/jade/") {
					ours = true
					seen[strings.SplitN(strings.TrimPrefix(name, "github.com/jadevm/jade/"), ".", 2)[0]] = true
				}
			}
		}
		require.True(t, ours, "a sample with no frame of this module")
	}
	for _, pkg := range []string{"sched", "bus", "uring"} {
		require.True(t, seen[pkg], "no sample in package %s", pkg)
	}
}
