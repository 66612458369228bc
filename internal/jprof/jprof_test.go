package jprof_test

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/jprof"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/native"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// loadFib loads examples/fib.jasm under the name fib.jasm.
func loadFib(t *testing.T, rt *jade.Runtime) *vmloop.Program {
	t.Helper()
	p, err := rt.Load("fib.jasm", []byte(testkit.Fib))
	require.NoError(t, err)
	return p
}

// profileFib runs fib.jasm's main until the profile holds at least want
// samples (1 ms period) and returns the parsed profile and the ids of the
// tasks it ran.
func profileFib(t *testing.T, rt *jade.Runtime, opts jprof.Options, want int64) (*profile.Profile, map[uint64]bool) {
	t.Helper()
	p := loadFib(t, rt)
	var buf bytes.Buffer
	opts.Period = time.Millisecond
	cpu, err := jprof.StartCPU(hostbus.Scheduler(rt), &buf, opts)
	require.NoError(t, err)
	ids := map[uint64]bool{}
	for deadline := time.Now().Add(20 * time.Second); cpu.Samples() < want && time.Now().Before(deadline); {
		task, err := rt.Spawn(p, "main", vmloop.StrArray(nil))
		require.NoError(t, err)
		ids[task.ID()] = true
		o, err := task.Wait(context.Background())
		require.NoError(t, err)
		require.Equal(t, sched.Success, o.Kind)
		require.Equal(t, int64(832040), o.Value.Int())
	}
	require.NoError(t, cpu.Stop())
	prof, err := profile.Parse(&buf)
	require.NoError(t, err)
	require.NoError(t, prof.CheckValid())
	return prof, ids
}

// flat sums the value of sample type typ by the innermost frame's
// function and by its function and line.
func flat(t *testing.T, prof *profile.Profile, typ string) (byFunc map[string]int64, byLine map[string]int64) {
	t.Helper()
	vi := -1
	for i, st := range prof.SampleType {
		if st.Type == typ {
			vi = i
		}
	}
	require.GreaterOrEqual(t, vi, 0, "no sample type %s", typ)
	byFunc, byLine = map[string]int64{}, map[string]int64{}
	for _, s := range prof.Sample {
		require.NotEmpty(t, s.Location)
		ln := s.Location[0].Line[0]
		byFunc[ln.Function.Name] += s.Value[vi]
		byLine[ln.Function.Filename+":"+strconv.FormatInt(ln.Line, 10)] += s.Value[vi]
	}
	return byFunc, byLine
}

func top(m map[string]int64) string {
	best := ""
	for k, v := range m {
		if best == "" || v > m[best] {
			best = k
		}
	}
	return best
}

// TestCPUProfileFib: the profile of examples/fib.jasm has fib as its top
// function, at lines of fib's body in fib.jasm, with the engine and task
// labels; on the cgo loop and on the Go loop.
func TestCPUProfileFib(t *testing.T) {
	for _, goLoop := range []bool{false, true} {
		t.Run("goLoop="+strconv.FormatBool(goLoop), func(t *testing.T) {
			if !goLoop && !native.Enabled() {
				t.Skip("the cgo loop is not available in this build")
			}
			rt := testkit.Runtime(t, jade.Options{Workers: 1, GoLoop: goLoop})
			prof, ids := profileFib(t, rt, jprof.Options{}, 40)
			byFunc, byLine := flat(t, prof, "cpu")
			require.Equal(t, "fib", top(byFunc), "flat by function: %v", byFunc)
			line := top(byLine)
			require.True(t, strings.HasPrefix(line, "fib.jasm:"), line)
			n, err := strconv.Atoi(strings.TrimPrefix(line, "fib.jasm:"))
			require.NoError(t, err)
			require.True(t, n >= 14 && n <= 22, "top line %s is not in fib's body (lines 14-22)", line)
			require.Equal(t, int64(time.Millisecond), prof.Period)
			for _, s := range prof.Sample {
				require.Equal(t, []string{"main"}, s.Label[jprof.LabelEngine])
				require.Len(t, s.Label[jprof.LabelTask], 1)
				id, err := strconv.ParseUint(s.Label[jprof.LabelTask][0], 10, 64)
				require.NoError(t, err)
				require.True(t, ids[id], "task %d was not spawned here", id)
				require.Equal(t, s.Value[0]*int64(time.Millisecond), s.Value[1])
				require.NotContains(t, s.Label, jprof.LabelTaskName)
				// The outermost frame is main, at its call of fib; or,
				// alone, at its ret: a slice that ends (here the task
				// completing) with a sample due takes it where it ends
				// (sched/profile.go). Its window is the path from the
				// loop's last safe point to the worker's end of the
				// slice: short on hardware, far longer under qemu-user,
				// where 5 of 11 runs met such a sample.
				out := s.Location[len(s.Location)-1].Line[0]
				require.Equal(t, "main", out.Function.Name)
				if len(s.Location) == 1 && out.Line == 9 {
					continue
				}
				require.Equal(t, int64(8), out.Line, "outermost frame of a sample %d frames deep", len(s.Location))
			}
		})
	}
}

// TestCPUProfileTaskName: the TaskName hook labels every sample.
func TestCPUProfileTaskName(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	prof, _ := profileFib(t, rt, jprof.Options{TaskName: func(tk *sched.Task) string {
		return "fib-" + strconv.FormatUint(tk.ID(), 10)
	}}, 5)
	require.NotEmpty(t, prof.Sample)
	for _, s := range prof.Sample {
		require.Equal(t, []string{"fib-" + s.Label[jprof.LabelTask][0]}, s.Label[jprof.LabelTaskName])
	}
}

// TestCPUProfileStartStop: one CPU profile at a time per scheduler, a
// second Stop fails, and a profile can start again after Stop.
func TestCPUProfileStartStop(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	s := hostbus.Scheduler(rt)
	for i := 0; i < 2; i++ {
		var buf bytes.Buffer
		cpu, err := jprof.StartCPU(s, &buf, jprof.Options{})
		require.NoError(t, err)
		_, err = jprof.StartCPU(s, &bytes.Buffer{}, jprof.Options{})
		require.ErrorContains(t, err, "already installed")
		require.NoError(t, cpu.Stop())
		require.Error(t, cpu.Stop())
		prof, err := profile.Parse(&buf)
		require.NoError(t, err)
		require.Equal(t, "cpu", prof.SampleType[1].Type)
	}
	// The host API: the same rules.
	var buf bytes.Buffer
	require.Error(t, rt.Observe().StopProfile())
	require.NoError(t, rt.Observe().StartProfile(&buf))
	require.Error(t, rt.Observe().StartProfile(&buf))
	require.NoError(t, rt.Observe().StopProfile())
	require.Error(t, rt.Observe().StopProfile())
	_, err := profile.Parse(&buf)
	require.NoError(t, err)
}

// TestProfilingOff: once a profile stopped, the workers are asked for
// nothing (no sampler), and heap allocations reach no sampler.
func TestProfilingOff(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	s := hostbus.Scheduler(rt)
	cpu, err := jprof.StartCPU(s, &bytes.Buffer{}, jprof.Options{})
	require.NoError(t, err)
	require.NoError(t, cpu.Stop())
	require.Equal(t, 0, s.RequestSamples(), "workers asked for samples with no profile running")

	heap, err := jprof.StartHeap(s, 1024)
	require.NoError(t, err)
	require.NoError(t, heap.Stop())
	before := heapTotals(t, heap)
	p := loadAlloc(t, rt)
	task, err := rt.Spawn(p, "churn", vmloop.I64(1000))
	require.NoError(t, err)
	o, err := task.Wait(context.Background())
	require.NoError(t, err)
	require.Equal(t, sched.Success, o.Kind)
	require.Equal(t, before, heapTotals(t, heap), "a stopped heap profile still samples")
}
