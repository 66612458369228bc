package vmloop

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestImportOneValueAllocatesNothing: importing a value that is one object
// (a string, a task or event handle: every spawn's result) reuses a freed
// slot and allocates nothing on the Go heap. The value must not be moved
// to the heap for the ref-array case's work list (importTree); that cost
// every spawn 112 bytes (BenchmarkChainedSpawn, BenchmarkSpawnJoin).
func TestImportOneValueAllocatesNothing(t *testing.T) {
	h := newTestHeap(1, 1<<20)
	ext := new(int)
	for _, v := range []Value{Str("abc"), Ext(KindEvent, ext), Void()} {
		x, err := h.importValue(v) // grows the table once
		require.NoError(t, err)
		h.release(x)
		n := testing.AllocsPerRun(100, func() {
			x, err := h.importValue(v)
			require.NoError(t, err)
			h.release(x)
		})
		require.Zero(t, n, "importing a %s allocates", v.Kind())
	}
}
