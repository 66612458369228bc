package jade_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/jtrace"
	"github.com/jadevm/jade/sched"
)

// TestNewRefusesHugeFlightRecorder: Options.FlightEvents, or JADE_FLIGHT,
// above jtrace.MaxFlightEvents is a configuration error (sched.ErrConfig),
// not a fatal "out of memory" of the Go runtime.
func TestNewRefusesHugeFlightRecorder(t *testing.T) {
	t.Setenv(sched.FlightEnv, "")
	rt, err := jade.New(jade.Options{Workers: 1, FlightEvents: 1 << 40})
	require.Nil(t, rt)
	require.ErrorIs(t, err, sched.ErrConfig)
	require.ErrorContains(t, err, "jade: new: flight recorder of 1099511627776 events per worker: at most 1048576")
	require.Equal(t, 1, strings.Count(err.Error(), "jade: "), "one jade: prefix: %v", err)

	t.Setenv(sched.FlightEnv, "1000000000000")
	_, err = jade.New(jade.Options{Workers: 1})
	require.True(t, errors.Is(err, sched.ErrConfig), "%v", err)
	require.ErrorContains(t, err, `JADE_FLIGHT="1000000000000": want 1 or a number of events per worker up to 1048576`)

	// The largest count is accepted.
	rt, err = jade.New(jade.Options{Workers: 1, FlightEvents: jtrace.MaxFlightEvents})
	require.NoError(t, err)
	require.NoError(t, rt.Close(t.Context()))
}
