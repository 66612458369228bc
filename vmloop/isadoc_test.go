package vmloop

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the generated tables in docs/ISA.md")

// TestISADocInSync keeps the generated tables of docs/ISA.md equal to the
// code (go test ./vmloop -run ISADoc -update-docs rewrites them).
func TestISADocInSync(t *testing.T) {
	const path = "../docs/ISA.md"
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	doc := string(raw)
	for _, sec := range []struct{ name, body string }{{"opcodes", ISATable()}, {"intrinsics", IntrinsicTable()}} {
		begin, end := "<!-- BEGIN GENERATED "+sec.name+" -->\n", "<!-- END GENERATED "+sec.name+" -->"
		i, j := strings.Index(doc, begin), strings.Index(doc, end)
		if i < 0 || j < i {
			t.Fatalf("%s: markers for %s missing", path, sec.name)
		}
		if doc[i+len(begin):j] != sec.body {
			if !*updateDocs {
				t.Errorf("%s: the %s table is out of date; run go test ./vmloop -run ISADoc -update-docs", path, sec.name)
				continue
			}
			doc = doc[:i+len(begin)] + sec.body + doc[j:]
		}
	}
	if *updateDocs {
		require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))
	}
}
