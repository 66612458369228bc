package jasm

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestErrorCapStopsParsing: a file of 80,000 bad lines is reported as
// maxErrors errors and "too many errors", and the assembler stops there
// instead of reading the rest of the file: it allocates a few MiB at most,
// whatever the file's size, where unknown mnemonics cost 3.6 GB (a
// suggestion computed for every line) and unknown directives 0.5 GB.
func TestErrorCapStopsParsing(t *testing.T) {
	for _, bad := range []string{"  bogus r1, r2", "  .bogus", "  %%%", "  add r1, r2, 5x", "  lbl: x.y r1", "  ldi r1, 99999999999999999999999"} {
		t.Run(strings.TrimSpace(bad), func(t *testing.T) {
			src := []byte(".func f()\n" + strings.Repeat(bad+"\n", 80_000) + "  retv\n.end\n")
			runtime.GC()
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			_, err := Assemble("x.jasm", src)
			runtime.ReadMemStats(&m1)
			var l ErrorList
			require.True(t, errors.As(err, &l), "%v", err)
			require.Len(t, l, maxErrors+1)
			require.Equal(t, "too many errors", l[maxErrors].Msg)
			require.Equal(t, 2, l[0].Line)
			alloc := m1.TotalAlloc - m0.TotalAlloc
			t.Logf("%d-byte source: %d bytes allocated", len(src), alloc)
			require.Less(t, alloc, uint64(4<<20), "allocated for a %d-byte source", len(src))
		})
	}
}
