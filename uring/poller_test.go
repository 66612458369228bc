package uring

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCheckPollerNamesTheVariable: a misspelt poller is an error that names
// where it came from and how to fix it; the valid settings pass.
func TestCheckPollerNamesTheVariable(t *testing.T) {
	for _, mode := range []string{"", "auto", "uring", "io_uring", "epoll"} {
		t.Setenv("JADE_POLLER", mode)
		require.NoError(t, CheckPoller(Options{}), mode)
	}
	t.Setenv("JADE_POLLER", "bogus")
	err := CheckPoller(Options{})
	require.ErrorIs(t, err, ErrUnknownPoller)
	require.EqualError(t, err, `uring: JADE_POLLER="bogus": unknown poller; set it to uring, epoll or auto, or leave it unset`)
	err = CheckPoller(Options{Poller: "kqueue"})
	require.ErrorContains(t, err, `Options.Poller="kqueue"`)
}
