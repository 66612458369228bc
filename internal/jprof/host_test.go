package jprof_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/jprof"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// TestCPUProfileHostFrame: the time a task spends in a host intrinsic
// (host.square spins 5 ms a call) is charged to a frame "intr
// host.square" of file <host>, above the Jade frame at the line of the
// call; it is most of the profile, worth the calls' time, and nothing is
// charged to the Jade line after the call.
func TestCPUProfileHostFrame(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	require.NoError(t, rt.RegisterIntrinsic("host.square", []vmloop.Type{vmloop.TI64}, vmloop.TI64, 0,
		func(c *bus.Call) (vmloop.Value, error) {
			for t0 := time.Now(); time.Since(t0) < 5*time.Millisecond; {
			}
			x := c.Args()[0].Int()
			return vmloop.I64(x * x), nil
		}))
	p, err := rt.Load("sq.jasm", []byte(`.func main(n:i64) -> i64
  .local i:i64, s:i64, v:i64
  const i, 0
  const s, 0
loop:
  intr  v, host.square, i
  add   s, s, v
  addi  i, i, 1
  jlt   i, n, loop
  ret   s
.end`))
	require.NoError(t, err)
	var buf bytes.Buffer
	cpu, err := jprof.StartCPU(hostbus.Scheduler(rt), &buf, jprof.Options{Period: 2 * time.Millisecond})
	require.NoError(t, err)
	start := time.Now()
	o := testkit.Run(t, rt, p, "main", vmloop.I64(40)) // 200 ms in host.square
	wall := time.Since(start)
	require.Equal(t, sched.Success, o.Kind)
	require.NoError(t, cpu.Stop())
	prof, err := profile.Parse(&buf)
	require.NoError(t, err)
	require.NoError(t, prof.CheckValid())

	var host, other, hostNs int64
	for _, s := range prof.Sample {
		top := s.Location[0].Line[0]
		if top.Function.Name != "intr host.square" {
			other += s.Value[0]
			continue
		}
		require.Equal(t, jprof.HostFile, top.Function.Filename)
		require.GreaterOrEqual(t, len(s.Location), 2)
		caller := s.Location[1].Line[0]
		require.Equal(t, "main", caller.Function.Name)
		require.Equal(t, "sq.jasm", caller.Function.Filename)
		require.Equal(t, int64(6), caller.Line, "the line of the intr")
		host += s.Value[0]
		hostNs += s.Value[1]
	}
	require.Positive(t, host, "no host frame in %v", prof)
	require.Greater(t, host, other, "the host calls are most of the time")
	// Worth the calls' time (200 ms): within the run's wall time, and at
	// least half of the calls' (a loaded machine may deschedule the worker
	// between ticks, never add time to a call).
	require.LessOrEqual(t, time.Duration(hostNs), wall+10*time.Millisecond)
	require.GreaterOrEqual(t, time.Duration(hostNs), 100*time.Millisecond)
}
