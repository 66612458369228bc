package syncbuf

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConcurrentWritesAndReads: writers and a reader at once (run under
// -race), and every write is kept.
func TestConcurrentWritesAndReads(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				_, _ = b.Write([]byte("x"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	require.Equal(t, strings.Repeat("x", 400), b.String())
}
