package vmloop

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestIntrObjsAreRefParams: every string or bytes parameter the verifier
// checks is a ref parameter of the central intrinsic of that name.
func TestIntrObjsAreRefParams(t *testing.T) {
	found := 0
	for name, params := range vfIntrObjs {
		in, ok := LookupIntrinsic(name)
		if !ok {
			continue // not in this build's central table
		}
		found++
		for i, k := range params {
			require.Less(t, i, len(in.Params), name)
			require.Equal(t, TRef, in.Params[i], "%s parameter %d", name, i)
			require.Contains(t, []uint8{vkStr, vkBytes}, k)
		}
	}
	require.GreaterOrEqual(t, found, 8)
}
