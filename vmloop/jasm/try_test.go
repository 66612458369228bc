package jasm

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
)

// manyTrySource builds a function with n .try ranges in groups of four
// (n is rounded down to a multiple of four): per group an inner range, a
// second range equal to it, one enclosing both and a disjoint one after
// them, listed in that (legal, innermost first) order. The lines in extra
// follow the generated .try lines (the first at line n+3). Every range
// shares the handler h at the end of the function; label x1 marks the last
// nop before it.
func manyTrySource(n int, extra ...string) string {
	var sb strings.Builder
	sb.WriteString(".func main(x:i64) -> i64\n  .local e:ref\n")
	groups := n / 4
	for i := range groups {
		fmt.Fprintf(&sb, "  .try a%d, b%d, h, e\n", i, i)
		fmt.Fprintf(&sb, "  .try a%d, b%d, h, e\n", i, i)
		fmt.Fprintf(&sb, "  .try o%d, c%d, h, e\n", i, i)
		fmt.Fprintf(&sb, "  .try d%d, g%d, h, e\n", i, i)
	}
	for _, l := range extra {
		sb.WriteString(l + "\n")
	}
	for i := range groups {
		fmt.Fprintf(&sb, "o%d: addi x, x, 1\n", i)
		fmt.Fprintf(&sb, "a%d: addi x, x, 2\n", i)
		fmt.Fprintf(&sb, "b%d: addi x, x, 3\n", i)
		fmt.Fprintf(&sb, "c%d: d%d: addi x, x, 4\n", i, i)
		fmt.Fprintf(&sb, "g%d: nop\n", i)
	}
	sb.WriteString("x1: nop\n  ret x\nh: ret x\n.end\n")
	return sb.String()
}

// TestAssembleManyTry: a function with 50,000 .try ranges assembles, with
// every range in source order. The overlap check used to compare each
// range with every range before it, so this took seconds.
func TestAssembleManyTry(t *testing.T) {
	const n = 50_000
	p, err := Assemble("many.jasm", []byte(manyTrySource(n)))
	require.NoError(t, err)
	hs := p.Funcs[0].Handlers
	require.Len(t, hs, n)
	h := uint32(len(p.Funcs[0].Code) - 1)
	for i := range n / 4 {
		base := uint32(5 * i)
		want := []vmloop.Handler{
			{Start: base + 1, End: base + 2, Target: h, Reg: 1},
			{Start: base + 1, End: base + 2, Target: h, Reg: 1},
			{Start: base, End: base + 3, Target: h, Reg: 1},
			{Start: base + 3, End: base + 4, Target: h, Reg: 1},
		}
		require.Equal(t, want, hs[4*i:4*i+4], "group %d", i)
	}
}

// TestTryConflictsAmongMany: among many accepted ranges, a late range
// that overlaps or lies inside earlier ones is rejected with the first
// range in listing order it conflicts with, as the check did when it
// compared each range with every earlier one. In the first two cases the
// outermost range that covers the new one (line 403) is not that range.
func TestTryConflictsAmongMany(t *testing.T) {
	const outer = "  .try o0, x1, h, e" // line 403: encloses every group
	cases := []struct {
		name, try, want string
	}{
		{"overlaps a group", "  .try b5, g5, h, e", "t.jasm:404:3: .try: this range overlaps the range at line 25 without nesting"},
		{"inside a group", "  .try a5, b5, h, e", "t.jasm:404:3: .try: this range lies inside the range listed at line 25; list the inner range first"},
		{"inside the outer range", "  .try g5, o6, h, e", "t.jasm:404:3: .try: this range lies inside the range listed at line 403"},
		{"overlaps the outer range", "  .try g99, h, h, e", "t.jasm:404:3: .try: this range overlaps the range at line 403 without nesting"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Assemble("t.jasm", []byte(manyTrySource(400, outer, c.try)))
			var l ErrorList
			require.ErrorAs(t, err, &l)
			require.Len(t, l, 1)
			require.ErrorContains(t, l[0], c.want)
		})
	}
	_, err := Assemble("t.jasm", []byte(manyTrySource(400, outer, outer, "  .try o0, h, h, e")))
	require.NoError(t, err, "equal ranges nest, and an outer range may follow them")
}

// TestManyBadTryStaysFast: many rejected .try lines (undefined labels,
// conflicts) among many labels and accepted ranges are reported as ten
// errors and "too many errors". Once the error list is full the assembler
// no longer looks for the conflicting range or a label to suggest, which
// took time proportional to the ranges (labels) for every bad line.
func TestManyBadTryStaysFast(t *testing.T) {
	const n = 20_000
	var extra []string
	for range n / 2 {
		extra = append(extra, "  .try b4999, g4999, h, e", "  .try nolabel, x1, h, e")
	}
	_, err := Assemble("t.jasm", []byte(manyTrySource(n, extra...)))
	var l ErrorList
	require.ErrorAs(t, err, &l)
	require.Len(t, l, maxErrors+1)
	require.Equal(t, "too many errors", l[maxErrors].Msg)
	require.Contains(t, l[0].Msg, "overlaps the range")
	require.Contains(t, l[1].Msg, "undefined label nolabel")
}

// BenchmarkAssembleManyTry reports the cost of assembling a function with
// n .try ranges (about 2.25 source lines per range); the cost per range
// should not grow with n.
func BenchmarkAssembleManyTry(b *testing.B) {
	for _, n := range []int{10_000, 20_000, 40_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			src := []byte(manyTrySource(n))
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if _, err := Assemble("many.jasm", src); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/range")
		})
	}
}

// TestCoverWorkIsLinear counts the union-find steps of the .try overlap
// check for 50,000 ranges in the orders that cost most: disjoint ranges
// listed backwards, ranges each enclosing the one before, and pairs
// merged level by level. Each range must cost a few steps, not a scan of
// the ranges before it.
func TestCoverWorkIsLinear(t *testing.T) {
	const n = 50_000
	type rng struct{ s, e int }
	shapes := map[string][]rng{}
	for i := range n {
		shapes["disjoint backwards"] = append(shapes["disjoint backwards"], rng{2 * (n - 1 - i), 2 * (n - i)})
		shapes["growing outwards"] = append(shapes["growing outwards"], rng{n - 1 - i, n + 1 + i})
	}
	for w := 1; w <= n/2; w *= 2 { // n/2 ranges of width 1, n/4 of width 2, ...
		for s := 0; s+w <= n/2; s += w {
			shapes["levels"] = append(shapes["levels"], rng{s, s + w})
		}
	}
	answers := map[bool]int{}
	for name, rs := range shapes {
		require.GreaterOrEqual(t, len(rs), n*9/10, name)
		c := newCover(2*n + 1)
		for _, r := range rs {
			require.False(t, c.conflicts(r.s, r.e), "%s: [%d, %d)", name, r.s, r.e)
			c.add(r.s, r.e)
		}
		require.LessOrEqual(t, c.steps, 4*n, name)
		// Ranges near accepted ones: conflicts agrees with comparing every
		// accepted range.
		rnd := rand.New(rand.NewPCG(1, uint64(len(name))))
		for range 200 {
			o := rs[rnd.IntN(len(rs))]
			s := max(0, o.s+rnd.IntN(3)-1)
			e := min(2*n+1, o.e+rnd.IntN(3)-1)
			if s >= e {
				continue
			}
			want := false
			for _, o := range rs {
				if s < o.e && o.s < e && !(s <= o.s && o.e <= e) {
					want = true
					break
				}
			}
			require.Equal(t, want, c.conflicts(s, e), "%s: [%d, %d)", name, s, e)
			answers[want]++
		}
		t.Logf("%s: %d steps", name, c.steps)
	}
	require.Len(t, answers, 2, "some ranges conflict and some do not")
}
