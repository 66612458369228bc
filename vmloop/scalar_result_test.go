package vmloop

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestScalarResult: a completed task's void, i64 and f64 results come
// out as the kind and bits of the Value Result returns; a reference
// result, and a task that has not completed, are not scalar.
func TestScalarResult(t *testing.T) {
	p := itProg(t, nil,
		itFn("i", "(i64)->i64", 1, "ret r0"),
		itFn("f", "(f64)->f64", 1, "ret r0"),
		itFn("v", "()->void", 1, "retv"),
		itFn("s", "()->ref", 2, "ldi r1, 0; itos r0, r1; ret r0"),
	)
	for _, c := range []struct {
		fn   string
		args []Value
		want Value
	}{
		{"i", []Value{I64(-7)}, I64(-7)},
		{"f", []Value{F64(math.Pi)}, F64(math.Pi)},
		{"v", nil, Void()},
	} {
		e := itStart(t, p, c.fn, c.args...)
		_, _, ok := e.ScalarResult()
		require.False(t, ok, "%s: not completed yet", c.fn)
		require.Equal(t, SigCompleted, itRun(t, e, 1<<20))
		k, bits, ok := e.ScalarResult()
		require.True(t, ok, c.fn)
		require.Equal(t, c.want.Kind(), k, c.fn)
		require.Equal(t, c.want, ScalarValue(k, bits), c.fn)
		require.Equal(t, e.Result(), ScalarValue(k, bits), c.fn)
	}
	e := itStart(t, p, "s")
	require.Equal(t, SigCompleted, itRun(t, e, 1<<20))
	_, _, ok := e.ScalarResult()
	require.False(t, ok, "a reference result is not scalar")
	require.Equal(t, "0", e.Result().String())
}
