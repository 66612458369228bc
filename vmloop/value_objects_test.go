package vmloop_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
)

// TestEachObject: every task, event and ext object of a value, at any
// depth of ref arrays (a nesting far deeper than a recursion would take),
// in order; false from the callback stops the walk.
func TestEachObject(t *testing.T) {
	a, b := new(int), new(int)
	v := vmloop.Ext(vmloop.KindEvent, a)
	for range 100_000 {
		var err error
		v, err = vmloop.Array(vmloop.KindArrayRef, vmloop.Str("s"), v, vmloop.Void())
		require.NoError(t, err)
	}
	v, err := vmloop.Array(vmloop.KindArrayRef, v, vmloop.Ext(vmloop.KindExt, b))
	require.NoError(t, err)
	var seen []any
	var kinds []vmloop.Kind
	require.True(t, v.EachObject(func(k vmloop.Kind, obj any) bool {
		seen, kinds = append(seen, obj), append(kinds, k)
		return true
	}))
	require.Equal(t, []any{a, b}, seen)
	require.Equal(t, []vmloop.Kind{vmloop.KindEvent, vmloop.KindExt}, kinds)
	n := 0
	require.False(t, v.EachObject(func(vmloop.Kind, any) bool { n++; return false }))
	require.Equal(t, 1, n)
	require.True(t, vmloop.I64(1).EachObject(func(vmloop.Kind, any) bool { panic("a number holds no object") }))
}
