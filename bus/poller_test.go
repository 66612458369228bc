package bus_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/uring"
)

// TestNewRejectsUnknownPoller: a bus with I/O refuses a JADE_POLLER it does
// not know, naming the variable, instead of starting workers that each
// fail to open a backend (the run then had I/O backend "none"). Without
// I/O the variable is not read.
func TestNewRejectsUnknownPoller(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("JADE_POLLER selects between the Linux backends only")
	}
	t.Setenv("JADE_POLLER", "bogus")
	_, err := bus.New(bus.Config{Workers: 1})
	require.ErrorIs(t, err, uring.ErrUnknownPoller)
	require.ErrorContains(t, err, `bus: new: JADE_POLLER="bogus"`)
	b, err := bus.New(bus.Config{Workers: 1, NoIO: true})
	require.NoError(t, err)
	require.NotNil(t, b)
}
