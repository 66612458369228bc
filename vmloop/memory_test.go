package vmloop

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestArrayOutcomeIsCompact: an i64 array copied out of a heap takes 8
// bytes an element in host memory (a Value per element took 112), and
// HostBytes counts what a copy of each shape really holds.
func TestArrayOutcomeIsCompact(t *testing.T) {
	var h heap
	h.init(1, boundsFor(1<<30, nil))
	const n = 1 << 20
	x := h.newArray(KindArrayI64, n)
	require.NotZero(t, x)
	h.at(x).arr()[n-1] = 7
	v, err := h.export(x, h.bnd.limit)
	require.NoError(t, err)
	require.Equal(t, n, v.Len())
	require.Equal(t, int64(7), v.Elems()[n-1].Int())
	require.Equal(t, 8*n+int(valueBytes), int(v.HostBytes()))
	require.Equal(t, 32+8*n, v.Size())

	// An array<ref> of n strings: a Value per element and the strings.
	ss := make([]string, 1000)
	for i := range ss {
		ss[i] = "ab"
	}
	sv := StrArray(ss)
	require.Equal(t, valueBytes+1000*valueBytes+2000, sv.HostBytes())
	y, err := h.importValue(sv)
	require.NoError(t, err)
	back, err := h.export(y, h.bnd.limit)
	require.NoError(t, err)
	require.True(t, back.Equal(sv))
}
