package vmloop

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
)

// TestMain runs the package's tests, then, when every test ran (no -run
// filter, no shuffle) and passed, fails the run if an opcode was never
// executed by any interpreter test: the coverage check cannot depend on
// the order in which tests run.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && allTestsRan() {
		if missing := opcodesNotRun(); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: opcode coverage: no interpreter test runs %s\n", strings.Join(missing, " "))
			code = 1
		}
	}
	os.Exit(code)
}

// allTestsRan reports whether neither -test.run, -test.skip nor
// -test.shuffle narrowed or reordered the run.
func allTestsRan() bool {
	for _, name := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	f := flag.Lookup("test.shuffle")
	return f == nil || f.Value.String() == "off"
}

// opcodesNotRun lists the opcodes no interpreter test has executed.
func opcodesNotRun() []string {
	itOpsMu.Lock()
	defer itOpsMu.Unlock()
	var missing []string
	for op := range NumOps {
		if !itOps[op] {
			missing = append(missing, Op(op).String())
		}
	}
	sort.Strings(missing)
	return missing
}
