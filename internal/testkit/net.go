package testkit

import (
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

// FreeAddr returns a loopback TCP address whose port was free a moment
// ago, for a server that the test starts on it.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}
