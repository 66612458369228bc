package vmloop

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// buildGraph makes objects in h from data: strings, i64 arrays, ref
// arrays sharing earlier objects (a DAG: an array only holds older
// objects, so the heap stays acyclic) and chains of up to 255·64 nested
// one-element arrays. It returns the handles made, newest last.
func buildGraph(h *heap, data []byte) []uint64 {
	var objs []uint64
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	pick := func() uint64 {
		if len(objs) == 0 {
			return 0
		}
		return objs[int(next())%len(objs)]
	}
	for len(data) > 0 {
		var x uint64
		switch op := next(); op % 4 {
		case 0:
			x = h.newString(string(rune('a' + op%26)))
		case 1:
			x = h.newArray(KindArrayI64, int(next()%8))
			for i := range h.at(x).arr() {
				h.at(x).arr()[i] = uint64(op) * uint64(i)
			}
		case 2:
			x = h.newArray(KindArrayRef, int(next()%6))
			for i := range h.at(x).arr() {
				h.at(x).arr()[i] = pick() // may be null
			}
		case 3:
			x = pick()
			for range int(next()) * 64 {
				y := h.newArray(KindArrayRef, 1)
				if y == 0 {
					break
				}
				h.at(y).arr()[0] = x
				x = y
			}
		}
		if x != 0 {
			objs = append(objs, x)
		}
	}
	return objs
}

// FuzzCopyNested: export of any object of a random DAG with deep chains
// copies it exactly (export, import into a fresh heap, export again gives
// an equal value, accounted as Value.Size says), within the export
// budget; an import that does not fit a smaller heap leaves it as it was.
// Run on a 16 MiB goroutine stack, so a walk that recursed per level
// would crash here.
func FuzzCopyNested(f *testing.F) {
	f.Add([]byte{0, 1, 1, 3, 2, 2, 0, 1, 3, 0, 200})
	f.Add([]byte{1, 4, 2, 5, 0, 0, 0, 0, 0, 3, 1, 255, 2, 3, 0, 1, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 256 {
			data = data[:256]
		}
		lowerMaxStack(t)
		h := newTestHeap(1, 64<<20)
		objs := buildGraph(h, data)
		if len(objs) == 0 {
			return
		}
		root := objs[len(objs)-1]
		v, err := h.export(root, 8<<20)
		if err != nil {
			var ti TrapInfo
			require.ErrorAs(t, err, &ti)
			require.Equal(t, TrapHeapLimit, ti.Code) // a DAG expanded past the budget
			return
		}
		h2 := newTestHeap(2, 64<<20)
		x, err := h2.importValue(v)
		require.NoError(t, err)
		require.Equal(t, int64(v.Size()), h2.bytes)
		back, err := h2.export(x, 64<<20)
		require.NoError(t, err)
		require.True(t, back.Equal(v))
		require.Equal(t, v.String(), back.String())

		small := newTestHeap(3, int64(v.Size())/2+objHeader+4)
		keep := small.newString("kept")
		bytes, live := small.bytes, small.liveObjects()
		if _, err := small.importValue(v); err != nil {
			require.Equal(t, bytes, small.bytes)
			require.Equal(t, live, small.liveObjects())
			require.NotNil(t, small.get(keep, KindString))
		}
	})
}
