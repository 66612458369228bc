package vmloop

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// vtDecodeAlloc decodes data and returns what the decoder allocated.
func vtDecodeAlloc(data []byte) (*Program, uint64, error) {
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	p, err := UnmarshalProgram(data)
	runtime.ReadMemStats(&m1)
	return p, m1.TotalAlloc - m0.TotalAlloc, err
}

// vtRepeat appends n copies of elem to b.
func vtRepeat(b vtBin, n int, elem ...byte) vtBin {
	for range n {
		b = append(b, elem...)
	}
	return b
}

// TestBinaryDecodeMemoryBound: files of small elements, each of which
// decodes to many times its size (a 240-byte Function for 7 bytes), are
// refused before the allocation, and what the decoder allocates stays
// within BinaryMemoryFactor times the file plus BinaryMemorySlack. The
// files are 4 MiB or more: above the slack.
func TestBinaryDecodeMemoryBound(t *testing.T) {
	const n = 1 << 22
	v4 := func() vtBin { return vtBin("JADE").u16(4).u16(ABI.Major).u16(ABI.Minor).str("").uv(0) }
	shapes := []struct {
		name, reason string
		data         []byte
	}{
		{"empty strings", "", vtRepeat(v4().uv(0).uv(0).uv(n), n, 0).uv(0).uv(0).uv(0)},
		{"empty bytes constants", "bytes constant count 4194304 needs 100663296 bytes", vtRepeat(v4().uv(0).uv(0).uv(0).uv(n), n, 0).uv(0).uv(0)},
		{"nameless imports (version 1)", "import count 4194304 needs", vtRepeat(vtPools()[:len(vtPools())-1].uv(n), n, 0).uv(0)},
		{"empty functions", "function count 599186 needs", vtRepeat(v4().uv(0).uv(0).uv(0).uv(0).uv(0).uv(n/7), n/7, 0, 0, 0, 0, 0, 0, 0)},
		{"empty labels", "label count 2097152 needs", vtRepeat(v4().uv(0).uv(0).uv(0).uv(0).uv(0).uv(1).fnHead(0).uv(0).uv(0).raw(binDebugLabels).uv(n/2), n/2, 0, 0)},
		{"empty register names", "", vtRepeat(v4().uv(0).uv(0).uv(0).uv(0).uv(0).uv(1).fnHead(0).uv(0).uv(0).raw(binDebugRegNames).uv(n), n, 0)},
	}
	for _, tc := range shapes {
		t.Run(tc.name, func(t *testing.T) {
			p, alloc, err := vtDecodeAlloc(tc.data)
			if tc.reason == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tc.reason)
				require.ErrorContains(t, err, "decode bound (16 times the")
				require.Nil(t, p)
			}
			bound := uint64(BinaryMemoryFactor*len(tc.data) + BinaryMemorySlack)
			require.LessOrEqual(t, alloc, bound, "%d bytes allocated for a %d-byte file", alloc, len(tc.data))
			t.Logf("%d-byte file: %d bytes allocated (%.1f times)", len(tc.data), alloc, float64(alloc)/float64(len(tc.data)))
		})
	}
}

// TestBinaryDecodeSmallFunctionsFit: the worst program the assembler
// writes, one-instruction functions with short names, stays within the
// decode bound and verifies.
func TestBinaryDecodeSmallFunctionsFit(t *testing.T) {
	fns := make([]Function, 1<<17)
	for i := range fns {
		fns[i] = vtFn(strconv.FormatInt(int64(i), 36), nil, TVoid, 0, Encode(RETV, 0, 0, 0, 0))
	}
	data, err := vtProg(fns...).MarshalBinary()
	require.NoError(t, err)
	p, alloc, err := vtDecodeAlloc(data)
	require.NoError(t, err)
	require.Len(t, p.Funcs, len(fns))
	require.LessOrEqual(t, alloc, uint64(BinaryMemoryFactor*len(data)))
	t.Logf("%d-byte file: %d bytes allocated (%.1f times)", len(data), alloc, float64(alloc)/float64(len(data)))
	require.NoError(t, Verify(p, nil))
}
