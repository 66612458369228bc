package vmloop

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// itBytes13 is a program with one function per primitive of ABI 1.3; toi
// and stoi return {value, end} as an i64 array.
func itBytes13(t *testing.T) *Program {
	pair := "ldi r5, 2; anew r6, r5, i64; ldi r5, 0; aseti r6, r5, r3; ldi r5, 1; aseti r6, r5, r4; ret r6"
	return itProg(t, &Program{KBytes: [][]byte{[]byte("HTTP/1.1 200 OK\r\n")}},
		itFn("findr", "(ref,ref,i64,i64)->i64", 5, "bfindr r4, r0, r1, r2, r3; ret r4"),
		itFn("cmp", "(ref,i64,i64,ref)->i64", 5, "bcmp r4, r0, r1, r2, r3; ret r4"),
		itFn("casecmp", "(ref,i64,i64,ref)->i64", 5, "bcasecmp r4, r0, r1, r2, r3; ret r4"),
		itFn("toi", "(ref,i64,i64)->ref", 7, "btoi r3, r4, r0, r1, r2; "+pair),
		itFn("stoi", "(ref,i64,i64)->ref", 7, "stoi r3, r4, r0, r1, r2; "+pair),
		itFn("itob", "(ref,i64,i64)->i64", 4, "itob r3, r0, r1, r2; ret r3"),
		itFn("itobbuf", "(ref,i64,i64)->ref", 4, "itob r3, r0, r1, r2; ret r0"),
		// ldb twice: the first copy is changed, the second is fresh
		itFn("ldb", "()->ref", 5, "ldb r0, 0; ldi r1, 0; ldi r2, 120; bset r0, r1, r2; ldb r3, 0; btos r4, r3; ret r4"),
	)
}

func itPair(t *testing.T, v Value) [2]int64 {
	t.Helper()
	el := v.Elems()
	require.Len(t, el, 2)
	return [2]int64{el[0].Int(), el[1].Int()}
}

func TestBfindr(t *testing.T) {
	p := itBytes13(t)
	B := func(s string) Value { return Bytes([]byte(s)) }
	for _, c := range []struct {
		hay, needle string
		from, to    int64
		want        int64
	}{
		{"a\r\nb\r\n", "\r\n", 0, 6, 1},
		{"a\r\nb\r\n", "\r\n", 2, 6, 4},
		{"a\r\nb\r\n", "\r\n", 2, 5, -1}, // the match ends past the bound
		{"ab\r\n\r\nstale", "\r\n\r\n", 0, 3, -1},
		{"GET / \r\n\r\nstale\r\n\r\n", "\r\n\r\n", 0, 10, 6},
		{"abc", "", 1, 1, 1},
		{"abc", "", 3, 3, 3},
		{"abc", "abcd", 0, 3, -1},
		{"", "x", 0, 0, -1},
	} {
		sig, e := itCall(t, p, "findr", B(c.hay), B(c.needle), I64(c.from), I64(c.to))
		require.Equal(t, SigCompleted, sig, "%+v: %v", c, e.Trap())
		require.Equal(t, c.want, e.Result().Int(), "bfindr(%q, %q, %d, %d)", c.hay, c.needle, c.from, c.to)
	}
	for _, r := range [][2]int64{{-1, 2}, {2, 1}, {0, 4}} {
		sig, e := itCall(t, p, "findr", B("abc"), B("a"), I64(r[0]), I64(r[1]))
		require.Equal(t, SigTrapped, sig)
		require.Equal(t, TrapBounds, e.Trap().Code)
		require.Contains(t, e.Trap().Msg, "bfindr: range")
	}
}

func TestBcmp(t *testing.T) {
	p := itBytes13(t)
	B := func(s string) Value { return Bytes([]byte(s)) }
	for _, c := range []struct {
		hay     string
		off, to int64
		needle  string
		cmp     int64
		fold    int64
	}{
		{"Content-Length: 42\r\n", 0, 20, "content-length:", -1, 0},
		{"Content-Length: 42\r\n", 0, 20, "Content-Length:", 0, 0},
		{"xCONTENT-LENGTH: 42", 1, 19, "content-length:", -1, 0},
		{"Content-Len", 0, 11, "content-length:", -1, -1}, // the range ends inside the needle
		{"Content-Length:stale", 0, 8, "Content-Length:", -1, -1},
		{"abc", 1, 1, "", 0, 0},
		{"abc", 3, 3, "x", -1, -1},
		{"abd", 0, 3, "abc", 1, 1},
		{"[", 0, 1, "{", -1, -1}, // not letters: no folding ('[' < '{')
		{"@", 0, 1, "`", -1, -1},
	} {
		sig, e := itCall(t, p, "cmp", B(c.hay), I64(c.off), I64(c.to), B(c.needle))
		require.Equal(t, SigCompleted, sig, "%+v: %v", c, e.Trap())
		require.Equal(t, c.cmp, e.Result().Int(), "bcmp %+v", c)
		sig, e = itCall(t, p, "casecmp", B(c.hay), I64(c.off), I64(c.to), B(c.needle))
		require.Equal(t, SigCompleted, sig, "%+v: %v", c, e.Trap())
		require.Equal(t, c.fold, e.Result().Int(), "bcasecmp %+v", c)
	}
	for _, fn := range []string{"cmp", "casecmp"} {
		for _, r := range [][2]int64{{-1, 2}, {2, 1}, {0, 4}} {
			sig, e := itCall(t, p, fn, B("abc"), I64(r[0]), I64(r[1]), B("a"))
			require.Equal(t, SigTrapped, sig)
			require.Equal(t, TrapBounds, e.Trap().Code)
		}
	}
}

func TestBtoiStoi(t *testing.T) {
	p := itBytes13(t)
	for _, c := range []struct {
		s        string
		from, to int64
		val, end int64
	}{
		{"Content-Length: 42\r\n", 16, 20, 42, 18},
		{"42", 0, 1, 4, 1}, // the bound cuts the number
		{"-42x", 0, 4, -42, 3},
		{"+7", 0, 2, 7, 2},
		{"0000000000000000000000000009", 0, 28, 9, 28},
		{"9223372036854775807", 0, 19, math.MaxInt64, 19},
		{"-9223372036854775808", 0, 20, math.MinInt64, 20},
		{"9223372036854775808", 0, 19, 0, -1},
		{"-9223372036854775809", 0, 20, 0, -1},
		{"99999999999999999999999", 0, 23, 0, -1},
		{"", 0, 0, 0, 0},
		{"-", 0, 1, 0, 0},
		{"x1", 0, 2, 0, 0},
		{"ab 12", 3, 5, 12, 5},
		{"ab -", 3, 4, 0, 3},
	} {
		sig, e := itCall(t, p, "toi", Bytes([]byte(c.s)), I64(c.from), I64(c.to))
		require.Equal(t, SigCompleted, sig, "%+v: %v", c, e.Trap())
		require.Equal(t, [2]int64{c.val, c.end}, itPair(t, e.Result()), "btoi %+v", c)
		sig, e = itCall(t, p, "stoi", Str(c.s), I64(c.from), I64(c.to))
		require.Equal(t, SigCompleted, sig, "%+v: %v", c, e.Trap())
		require.Equal(t, [2]int64{c.val, c.end}, itPair(t, e.Result()), "stoi %+v", c)
	}
	for _, fn := range []string{"toi", "stoi"} {
		arg := Str("123")
		if fn == "toi" {
			arg = Bytes([]byte("123"))
		}
		for _, r := range [][2]int64{{-1, 2}, {2, 1}, {0, 4}} {
			sig, e := itCall(t, p, fn, arg, I64(r[0]), I64(r[1]))
			require.Equal(t, SigTrapped, sig)
			require.Equal(t, TrapBounds, e.Trap().Code)
		}
	}
}

func TestItob(t *testing.T) {
	p := itBytes13(t)
	for _, c := range []struct {
		n, off, v int64
		want      string
		next      int64
	}{
		{20, 16, 42, "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x0042\x00\x00", 18},
		{3, 0, -42, "-42", 3},
		{1, 0, 0, "0", 1},
		{20, 0, math.MinInt64, "-9223372036854775808", 20},
	} {
		sig, e := itCall(t, p, "itobbuf", Bytes(make([]byte, c.n)), I64(c.off), I64(c.v))
		require.Equal(t, SigCompleted, sig, "%+v: %v", c, e.Trap())
		require.Equal(t, c.want, string(e.Result().BytesData()))
		sig, e = itCall(t, p, "itob", Bytes(make([]byte, c.n)), I64(c.off), I64(c.v))
		require.Equal(t, SigCompleted, sig)
		require.Equal(t, c.next, e.Result().Int())
	}
	for _, c := range [][3]int64{{2, 0, 100}, {3, 1, 100}, {3, -1, 1}, {3, 4, 1}, {3, math.MaxInt64, 1}} {
		sig, e := itCall(t, p, "itob", Bytes(make([]byte, c[0])), I64(c[1]), I64(c[2]))
		require.Equal(t, SigTrapped, sig, "%v", c)
		require.Equal(t, TrapBounds, e.Trap().Code)
		require.Contains(t, e.Trap().Msg, "itob: ")
	}
}

func TestLdbCopies(t *testing.T) {
	p := itBytes13(t)
	sig, e := itCall(t, p, "ldb")
	require.Equal(t, SigCompleted, sig, "%v", e.Trap())
	require.Equal(t, "HTTP/1.1 200 OK\r\n", e.Result().String(), "each ldb is a fresh copy")
	require.Equal(t, "HTTP/1.1 200 OK\r\n", string(p.KBytes[0]), "the pool is never written")
	// ldb, ldi, ldi, bset, ldb, btos, ret and ⌈17/64⌉ for each copy
	require.Equal(t, uint64(7+3), e.Reductions())
}

// TestBytes13Costs: each primitive costs 1 + ⌈n/64⌉ for the n bytes it
// compares, scans or parses (itob costs 1).
func TestBytes13Costs(t *testing.T) {
	p := itBytes13(t)
	hay := Bytes([]byte(strings.Repeat("a", 1000) + "b"))
	for _, c := range []struct {
		fn   string
		args []Value
		cost uint64 // beyond the instruction and its ret
	}{
		{"findr", []Value{hay, Bytes([]byte("b")), I64(0), I64(1001)}, (1001 + 63) / 64},
		{"findr", []Value{hay, Bytes([]byte("b")), I64(0), I64(640)}, 10}, // 640 candidates, no match
		{"cmp", []Value{hay, I64(0), I64(1001), Bytes([]byte(strings.Repeat("a", 200)))}, 4},
		{"casecmp", []Value{hay, I64(0), I64(100), Bytes([]byte(strings.Repeat("A", 200)))}, 2},
		{"itob", []Value{Bytes(make([]byte, 20)), I64(0), I64(math.MaxInt64)}, 0},
	} {
		sig, e := itCall(t, p, c.fn, c.args...)
		require.Equal(t, SigCompleted, sig, "%v", e.Trap())
		require.Equal(t, 2+c.cost, e.Reductions(), "%s", c.fn)
	}
	digits := Bytes([]byte(strings.Repeat("0", 130) + "7"))
	sig, e := itCall(t, p, "toi", digits, I64(0), I64(131))
	require.Equal(t, SigCompleted, sig)
	require.Equal(t, [2]int64{7, 131}, itPair(t, e.Result()))
	// btoi 1 + ⌈131/64⌉, then ldi, anew (2), ldi, aseti, ldi, aseti, ret
	require.Equal(t, uint64(1+3+8), e.Reductions())
}

// TestBytes13Chunked: over longN bytes each scanning primitive stops at least
// every 64 KiB when the budget is spent, and gives the same result and
// cost as in one slice.
func TestBytes13Chunked(t *testing.T) {
	const n = longN
	p := itBytes13(t)
	hay := Bytes(append(make([]byte, n-4), "\r\n\r\n"...))
	zeros := append([]byte(strings.Repeat("0", n-2)), "42"...)
	long := []byte(strings.Repeat("k", n))
	for _, c := range []struct {
		fn   string
		args []Value
		cost uint64
		want func(v Value)
	}{
		{"findr", []Value{hay, Bytes([]byte("\r\n\r\n")), I64(0), I64(n)}, (n - 3 + 63) / 64, func(v Value) {
			require.Equal(t, int64(n-4), v.Int())
		}},
		{"cmp", []Value{Bytes(long), I64(0), I64(n), Bytes(long)}, n / 64, func(v Value) { require.Equal(t, int64(0), v.Int()) }},
		{"casecmp", []Value{Bytes(long), I64(0), I64(n), Bytes([]byte(strings.ToUpper(string(long))))}, n / 64, func(v Value) {
			require.Equal(t, int64(0), v.Int())
		}},
		{"toi", []Value{Bytes(zeros), I64(0), I64(n)}, n / 64, func(v Value) { require.Equal(t, [2]int64{42, n}, itPair(t, v)) }},
		{"stoi", []Value{Str(string(zeros)), I64(0), I64(n)}, n / 64, func(v Value) { require.Equal(t, [2]int64{42, n}, itPair(t, v)) }},
	} {
		t.Run(c.fn, func(t *testing.T) {
			e, err := NewExec(p, p.FuncIndex(c.fn), c.args, longLimits, 1)
			require.NoError(t, err)
			most, total := stepWork(t, e)
			require.Equal(t, SigCompleted, e.Run(1), "trap: %v", e.Trap())
			require.LessOrEqual(t, most, uint64(chunkWork), "work between two safe points")
			require.GreaterOrEqual(t, total, c.cost)
			c.want(e.Result())
			e2, err := NewExec(p, p.FuncIndex(c.fn), c.args, longLimits, 1)
			require.NoError(t, err)
			require.Equal(t, SigCompleted, e2.Run(1<<40))
			require.Equal(t, total, e2.Reductions())
			require.True(t, e.Result().Equal(e2.Result()))
		})
	}
}

// TestBytes13WrongKind: a handle whose kind the verifier cannot know (a
// parameter) still traps at run time when it is of the wrong kind.
func TestBytes13WrongKind(t *testing.T) {
	p := itBytes13(t)
	sig, e := itCall(t, p, "cmp", Str("abc"), I64(0), I64(1), Bytes([]byte("a")))
	require.Equal(t, SigTrapped, sig)
	require.Equal(t, TrapHandle, e.Trap().Code)
	sig, e = itCall(t, p, "stoi", Bytes([]byte("1")), I64(0), I64(1))
	require.Equal(t, SigTrapped, sig)
	require.Equal(t, TrapHandle, e.Trap().Code)
}
