package jade_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var (
	testDeclRE = regexp.MustCompile(`(?m)^func (Test[A-Z]\w*)\(`)
	testCiteRE = regexp.MustCompile(`\bTest[A-Z]\w+`)
)

// TestCitedTestsExist: every test name that a comment of the code (the
// non-test .go files) or a document (docs/*.md and the top-level *.md)
// cites as the proof of a claim is the name of a test of this repository,
// so a renamed or removed test cannot leave a claim pointing at nothing.
func TestCitedTestsExist(t *testing.T) {
	defined := map[string]bool{}
	cites := map[string][]string{} // name -> files citing it
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// build/ holds the platform runs' caches (a copy of a Go source
			// file among them), out/ the harness's: neither is the
			// repository's code.
			if n := d.Name(); path != "." && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules" || n == "out" || path == "build") {
				return filepath.SkipDir
			}
			return nil
		}
		doc := strings.HasSuffix(path, ".md") && (filepath.Dir(path) == "." || filepath.Dir(path) == "docs")
		if !strings.HasSuffix(path, ".go") && !doc {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.HasSuffix(path, "_test.go") {
			for _, m := range testDeclRE.FindAllSubmatch(b, -1) {
				defined[string(m[1])] = true
			}
			return nil
		}
		for _, n := range testCiteRE.FindAllString(string(b), -1) {
			cites[n] = append(cites[n], path)
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, defined)
	var missing []string
	for n, files := range cites {
		if !defined[n] {
			missing = append(missing, n+" (cited in "+strings.Join(files, ", ")+")")
		}
	}
	sort.Strings(missing)
	require.Empty(t, missing, "cited tests that do not exist")
}
