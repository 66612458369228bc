package vmloop

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// itFind is a program with bfind(hay, needle, start) and bfindr(hay,
// needle, from, to).
func itFind(t *testing.T) *Program {
	return itProg(t, nil,
		itFn("find", "(ref,ref,i64)->i64", 4, "bfind r3, r0, r1, r2; ret r3"),
		itFn("findr", "(ref,ref,i64,i64)->i64", 5, "bfindr r4, r0, r1, r2, r3; ret r4"),
	)
}

// periodic returns n bytes of "ab" and 14 x's repeated.
func periodic(n int) string {
	return strings.Repeat("ab"+strings.Repeat("x", 14), n/16+1)[:n]
}

// TestLongNeedleChunked: a search for a long needle is charged the bytes
// it compares (at least the needle's length for a match, at least one per
// offset), stops at least every 64 KiB of that work when the budget is
// spent, and gives the same result and cost as in one slice. A needle
// the whole length of the range used to be charged one reduction for
// comparing all of it, and a periodic needle compared up to its whole
// length at every 16th offset of a chunk charged 1/64 per offset.
func TestLongNeedleChunked(t *testing.T) {
	const n = longN / 2
	const m = n / 8
	p := itFind(t)
	same := strings.Repeat("q", m-1) + "r"
	atEnd := strings.Repeat("q", n-m) + same
	per := periodic(n)
	perNeedle := per[:m-1] + "y"
	for _, c := range []struct {
		name        string
		hay, needle string
		want        int64
		cost        uint64 // a lower bound of the work
	}{
		{"whole", same, same, 0, m / 64},
		{"at end", atEnd, same, n - m, (n - m) / 64},
		{"periodic absent", per, perNeedle, -1, (n - m) / 64},
		{"periodic at end", per[:n-m] + perNeedle, perNeedle, n - m, (n - m) / 64},
	} {
		for _, fn := range []string{"find", "findr"} {
			t.Run(c.name+"/"+fn, func(t *testing.T) {
				args := []Value{Bytes([]byte(c.hay)), Bytes([]byte(c.needle)), I64(0)}
				if fn == "findr" {
					args = append(args, I64(int64(len(c.hay))))
				}
				e, err := NewExec(p, p.FuncIndex(fn), args, longLimits, 1)
				require.NoError(t, err)
				most, total := stepWork(t, e)
				require.Equal(t, SigCompleted, e.Run(1), "trap: %v", e.Trap())
				require.Equal(t, c.want, e.Result().Int())
				require.LessOrEqual(t, most, uint64(chunkWork), "work between two safe points")
				require.GreaterOrEqual(t, total, c.cost, "charged the bytes compared")

				e2, err := NewExec(p, p.FuncIndex(fn), args, longLimits, 1)
				require.NoError(t, err)
				require.Equal(t, SigCompleted, e2.Run(1<<40))
				require.Equal(t, c.want, e2.Result().Int())
				require.Equal(t, total, e2.Reductions(), "the same cost in one slice")
			})
		}
	}
}

// TestLongNeedleMatchesIndex: the two-way search of needles over 64 bytes
// finds what strings.Index finds, on random texts over small alphabets
// (periodic needles, near misses), for random ranges, with the search cut
// into chunks of a few units and preempted at every one of them.
func TestLongNeedleMatchesIndex(t *testing.T) {
	defer func(c int64) { findChunk = c }(findChunk)
	p := itFind(t)
	rng := rand.New(rand.NewPCG(11, 34))
	text := func(n int, alpha string) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alpha[rng.IntN(len(alpha))]
		}
		return string(b)
	}
	for i := range 3000 {
		findChunk = int64(1 + rng.IntN(200))
		alpha := "ab"[:1+rng.IntN(2)]
		if rng.IntN(4) == 0 {
			alpha = "abcd"
		}
		m := shortNeedle + 1 + rng.IntN(200)
		var needle string
		switch rng.IntN(3) {
		case 0:
			needle = text(m, alpha)
		case 1: // periodic
			needle = strings.Repeat(text(1+rng.IntN(9), alpha), m)[:m]
		default: // periodic with one byte changed
			b := []byte(strings.Repeat(text(1+rng.IntN(9), alpha), m)[:m])
			b[rng.IntN(m)] = 'z'
			needle = string(b)
		}
		var hay string
		for len(hay) < 2000 {
			switch rng.IntN(3) {
			case 0:
				hay += needle[:rng.IntN(m)]
			case 1:
				hay += needle
			default:
				hay += text(rng.IntN(50), alpha)
			}
		}
		from := int64(rng.IntN(len(hay) / 2))
		to := from + int64(rng.IntN(len(hay)-int(from)+1))
		want := int64(strings.Index(hay[from:to], needle))
		if want >= 0 {
			want += from
		}
		args := []Value{Bytes([]byte(hay)), Bytes([]byte(needle)), I64(from), I64(to)}
		e := itStart(t, p, "findr", args...)
		_, total := stepWork(t, e)
		require.Equal(t, SigCompleted, e.Run(1), "case %d: trap: %v", i, e.Trap())
		require.Equal(t, want, e.Result().Int(), "case %d: needle %q in %q[%d:%d]", i, needle, hay, from, to)
		e2 := itStart(t, p, "findr", args...)
		require.Equal(t, SigCompleted, e2.Run(1<<40))
		require.Equal(t, total, e2.Reductions(), "case %d", i)

		wantAll := int64(strings.Index(hay[from:], needle))
		if wantAll >= 0 {
			wantAll += from
		}
		e3 := itStart(t, p, "find", Bytes([]byte(hay)), Bytes([]byte(needle)), I64(from))
		require.Equal(t, SigCompleted, itRun(t, e3, 1))
		require.Equal(t, wantAll, e3.Result().Int(), "case %d: bfind", i)
	}
}

// TestCaseCompareBlocks: the folded compare by words agrees with the byte
// by byte one for every pair of bytes at every place of a block, and
// btoi skips long runs of leading zeros exactly.
func TestCaseCompareBlocks(t *testing.T) {
	slow := func(a, b string) int64 {
		for i := 0; i < len(a); i++ {
			if x, y := lowerASCII(a[i]), lowerASCII(b[i]); x != y {
				if x < y {
					return -1
				}
				return 1
			}
		}
		return 0
	}
	base := []byte(strings.Repeat("aZ09", 40)) // 160 bytes: 2 blocks of 64, words, a tail
	for x := 0; x < 256; x++ {
		for y := 0; y < 256; y++ {
			for _, at := range []int{3, 70, 130, 157} {
				a, b := append([]byte(nil), base...), append([]byte(nil), base...)
				a[at], b[at] = byte(x), byte(y)
				require.Equal(t, slow(string(a), string(b)), caseCompare(string(a), string(b)), "%#x %#x at %d", x, y, at)
			}
		}
	}
	for _, z := range []int{0, 1, 63, 64, 65, 200} {
		s := strings.Repeat("0", z)
		require.Equal(t, z, zeroRun(s))
		require.Equal(t, z, zeroRun(s+"1"+s))
	}
}
