package vmloop

import (
	"flag"
	"sort"
	"strings"
	"testing"
)

// TestZOpcodeCoverage runs after the other interpreter tests (file and
// declaration order) and fails if an opcode was never run by any of them.
// It is skipped when tests are filtered or shuffled.
func TestZOpcodeCoverage(t *testing.T) {
	if f := flag.Lookup("test.run"); f == nil || f.Value.String() != "" {
		t.Skip("tests are filtered")
	}
	if f := flag.Lookup("test.shuffle"); f != nil && f.Value.String() != "off" {
		t.Skip("tests are shuffled")
	}
	itOpsMu.Lock()
	defer itOpsMu.Unlock()
	var missing []string
	for op := range NumOps {
		if !itOps[op] {
			missing = append(missing, Op(op).String())
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("no interpreter test runs: %s", strings.Join(missing, " "))
	}
}
