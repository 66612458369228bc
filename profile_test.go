package jade_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/examples"
	"github.com/jadevm/jade/vmloop"
)

// TestCloseWritesRunningProfiles: Close and Shutdown stop the CPU and heap
// profiles a host left running and write them; the host's own stop then
// says ErrNoProfile.
func TestCloseWritesRunningProfiles(t *testing.T) {
	for _, end := range []struct {
		name string
		stop func(*jade.Runtime) error
	}{
		{"Close", func(rt *jade.Runtime) error { return rt.Close(context.Background()) }},
		{"Shutdown", func(rt *jade.Runtime) error { return rt.Shutdown(context.Background()) }},
	} {
		t.Run(end.name, func(t *testing.T) {
			rt, err := jade.New(jade.Options{Workers: 1, ProfilePeriod: time.Millisecond})
			require.NoError(t, err)
			p, err := rt.Load("fib.jasm", examples.Fib)
			require.NoError(t, err)
			var cpu, heap bytes.Buffer
			require.NoError(t, rt.Observe().StartProfile(&cpu))
			require.NoError(t, rt.Observe().StartHeapProfile(&heap))
			_, err = rt.Run(context.Background(), p, "main", vmloop.StrArray(nil))
			require.NoError(t, err)
			require.NoError(t, end.stop(rt))
			for name, b := range map[string]*bytes.Buffer{"cpu": &cpu, "heap": &heap} {
				prof, err := profile.Parse(b)
				require.NoError(t, err, "the %s profile was written", name)
				require.NoError(t, prof.CheckValid())
			}
			require.ErrorIs(t, rt.Observe().StopProfile(), jade.ErrNoProfile)
			require.ErrorIs(t, rt.Observe().StopHeapProfile(), jade.ErrNoProfile)
		})
	}
}
