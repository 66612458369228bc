package jprof_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/jprof"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/vmloop"
)

// TestCPUProfileTaskNameDefault: without a TaskName hook, the samples of
// a named task carry its name (Runtime.SpawnWith with a name).
func TestCPUProfileTaskNameDefault(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	p := loadFib(t, rt)
	var buf bytes.Buffer
	cpu, err := jprof.StartCPU(hostbus.Scheduler(rt), &buf, jprof.Options{Period: time.Millisecond})
	require.NoError(t, err)
	for deadline := time.Now().Add(20 * time.Second); cpu.Samples() < 5 && time.Now().Before(deadline); {
		task, err := rt.SpawnWith(jade.SpawnOptions{Name: "fib-job"}, p, "main", vmloop.StrArray(nil))
		require.NoError(t, err)
		_, err = task.Wait(context.Background())
		require.NoError(t, err)
	}
	require.NoError(t, cpu.Stop())
	prof, err := profile.Parse(&buf)
	require.NoError(t, err)
	require.NotEmpty(t, prof.Sample)
	for _, s := range prof.Sample {
		require.Equal(t, []string{"fib-job"}, s.Label[jprof.LabelTaskName])
	}
}
