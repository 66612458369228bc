package errs

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

var errSentinel = errors.New("resource limit reached")

func TestWrapDropsInnerPrefixes(t *testing.T) {
	inner := fmt.Errorf("sched: spawn: engine %q has 1 live task (limit 1): %w", "lim", errSentinel)
	bus := fmt.Errorf("bus: spawn: %w", inner)
	err := Wrap("jade", "spawn", bus)
	require.Equal(t, `jade: spawn: engine "lim" has 1 live task (limit 1): resource limit reached`, err.Error())
	require.ErrorIs(t, err, errSentinel)

	err = Wrap("bus", `register engine "bad"`, fmt.Errorf("sched: engine config: reductionLimit -1: %w", errSentinel))
	require.Equal(t, `bus: register engine "bad": engine config: reductionLimit -1: resource limit reached`, err.Error())
	err = Relabel("jade", "register engine", err)
	require.Equal(t, `jade: register engine "bad": engine config: reductionLimit -1: resource limit reached`, err.Error())
	err = Relabel("jade", "register intrinsic", errors.New(`bus: register intrinsic "x": nil function`))
	require.Equal(t, `jade: register intrinsic "x": nil function`, err.Error())
	err = Relabel("jade", "register engine", Wrap("bus", `register engine "bad"`, fmt.Errorf("sched: engine config: reductionLimit -1: %w", errSentinel)))
	require.Equal(t, `jade: register engine "bad": engine config: reductionLimit -1: resource limit reached`, err.Error())
	require.ErrorIs(t, err, errSentinel)

	err = Wrap("jade", "new", fmt.Errorf("bus: new: %w", fmt.Errorf("sched: new: flight recorder: %w", errSentinel)))
	require.Equal(t, "jade: new: flight recorder: resource limit reached", err.Error())
	require.Equal(t, "jade: load: f.jasm:1:2: bad", Relabel("jade", "load", errors.New("f.jasm:1:2: bad")).Error())
	require.Nil(t, Wrap("jade", "x", nil))
	require.Nil(t, Relabel("jade", "x", nil))
}
