package jade_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestREADMEEmbeddingIsTheExample: the README's embedding snippet is the
// body of Example_embed, so it compiles and runs as shown.
func TestREADMEEmbeddingIsTheExample(t *testing.T) {
	ex, err := os.ReadFile("example_embed_test.go")
	require.NoError(t, err)
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	src := string(ex)
	i := strings.Index(src, "\tctx := context.Background()")
	j := strings.Index(src, "\t// Output:")
	require.True(t, i > 0 && j > i, "Example_embed's body not found")
	var body []string
	for _, l := range strings.Split(strings.TrimRight(src[i:j], "\n"), "\n") {
		body = append(body, strings.TrimPrefix(l, "\t"))
	}
	require.Contains(t, string(readme), "import \"github.com/jadevm/jade\"\n\n"+strings.Join(body, "\n")+"\n```",
		"README.md's embedding section differs from Example_embed: copy the example's body into it")
}
