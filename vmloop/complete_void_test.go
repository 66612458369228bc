package vmloop

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCompleteVoid: CompleteVoid does what Complete(Void()) does, on a
// request without a destination (the fast path), with an i64 and a
// reference destination, and with no request pending.
func TestCompleteVoid(t *testing.T) {
	for _, c := range []struct {
		name, sig, code string
		arg             Value
	}{
		{"no destination", "(i64)->i64", "yield; ret r0", I64(4)},
		{"i64 destination", "(ref)->i64", "ldi r1, 0; joini r1, r0; ret r1", Ext(KindTask, 1)},
		{"ref destination", "(ref)->i64", "joinr r1, r0; ldi r2, 5; ret r2", Ext(KindTask, 1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := itProg(t, nil, itFn("f", c.sig, 3, c.code))
			a, b := itStart(t, p, "f", c.arg), itStart(t, p, "f", c.arg)
			require.Equal(t, SigIntrinsic, a.Run(100))
			require.Equal(t, SigIntrinsic, b.Run(100))
			errA, errB := a.Complete(Void()), b.CompleteVoid()
			require.Equal(t, errA, errB)
			require.Equal(t, a.Request() == nil, b.Request() == nil, "the request completed")
			sa, sb := a.Run(100), b.Run(100)
			require.Equal(t, sa, sb)
			require.Equal(t, a.Trap(), b.Trap())
			if sa == SigCompleted {
				require.Equal(t, a.Result(), b.Result())
			}
			require.Equal(t, a.CompleteVoid(), a.Complete(Void()), "no request pending")
		})
	}
}
