package sched_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// chromeTrace is the part of a Chrome trace-event file the tests read.
type chromeTrace struct {
	TraceEvents []struct {
		Name string         `json:"name"`
		Cat  string         `json:"cat"`
		Ph   string         `json:"ph"`
		Ts   float64        `json:"ts"`
		Dur  float64        `json:"dur"`
		Tid  int            `json:"tid"`
		ID   uint64         `json:"id"`
		Args map[string]any `json:"args"`
	} `json:"traceEvents"`
	OtherData struct {
		DroppedEvents uint64 `json:"droppedEvents"`
	} `json:"otherData"`
}

func parseTrace(t *testing.T, b []byte) chromeTrace {
	t.Helper()
	var tr chromeTrace
	require.NoError(t, json.Unmarshal(b, &tr), "the trace is not JSON")
	return tr
}

// TestTraceFanout records a full trace of examples/fanout.jasm's
// fanout(10000) and finds a dispatch and a completion of each of its
// 10,000 children (and of fanout itself), and arrows from wakes to
// dispatches.
func TestTraceFanout(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 2})
	p := testkit.Load(t, rt, testkit.Fanout)
	var buf bytes.Buffer
	require.NoError(t, rt.Observe().StartTrace(&buf))
	require.Error(t, rt.Observe().StartTrace(&buf), "a second trace started")
	o := testkit.RunFanout(t, rt, p, 10_000)
	require.Equal(t, sched.Success, o.Kind)
	require.Equal(t, int64(49_995_000), o.Value.Int())
	require.NoError(t, rt.Observe().StopTrace())
	require.Error(t, rt.Observe().StopTrace(), "stopped twice")

	tr := parseTrace(t, buf.Bytes())
	require.Zero(t, tr.OtherData.DroppedEvents)
	dispatched := map[uint64]bool{}
	completed := map[uint64]bool{}
	var children, flowsS, flowsF int
	for _, e := range tr.TraceEvents {
		switch {
		case e.Ph == "X" && e.Cat == "task":
			id := uint64(e.Args["task"].(float64))
			if _, ok := e.Args["at"]; ok {
				dispatched[id] = true
			}
			if e.Args["end"] == "complete" {
				require.False(t, completed[id], "task %d completed twice", id)
				completed[id] = true
				if e.Name == "child" {
					children++
				}
			}
		case e.Ph == "s":
			flowsS++
		case e.Ph == "f":
			flowsF++
		}
	}
	require.Equal(t, 10_000, children, "completed children")
	require.Len(t, completed, 10_001, "fanout and its children")
	for id := range completed {
		require.True(t, dispatched[id], "task %d completed without a dispatch", id)
	}
	require.GreaterOrEqual(t, flowsS, 10_000, "spawn and wake arrows")
	require.GreaterOrEqual(t, flowsF, 10_000, "arrow ends at dispatches")
	requireNested(t, tr)
}

// requireNested fails when two slices of one track overlap without one
// holding the other (the viewers need slices of a thread to nest).
func requireNested(t *testing.T, tr chromeTrace) {
	t.Helper()
	type span struct{ from, to float64 }
	byTid := map[int][]span{}
	for _, e := range tr.TraceEvents {
		if e.Ph == "X" {
			byTid[e.Tid] = append(byTid[e.Tid], span{e.Ts, e.Ts + e.Dur})
		}
	}
	const eps = 1e-6
	for tid, ss := range byTid {
		sort.Slice(ss, func(i, j int) bool { return ss[i].from < ss[j].from })
		for i := 1; i < len(ss); i++ {
			a, b := ss[i-1], ss[i]
			require.False(t, b.from < a.to-eps && b.to > a.to+eps, "track %d: %v overlaps %v", tid, a, b)
		}
	}
}

// spinProgram calls test.spin (a host call that spins for its argument
// in ms) from main.
const spinProgram = `
.func main(ms:i64) -> i64
  .local r:i64
  intr r, test.spin, ms
  ret r
.end
`

func registerSpin(t *testing.T, rt *jade.Runtime) {
	t.Helper()
	require.NoError(t, rt.RegisterIntrinsic("test.spin", []vmloop.Type{vmloop.TI64}, vmloop.TI64, 0,
		func(c *bus.Call) (vmloop.Value, error) {
			end := time.Now().Add(time.Duration(c.Args()[0].Int()) * time.Millisecond)
			n := int64(0)
			for time.Now().Before(end) {
				n++
			}
			return vmloop.I64(n), nil
		}))
}

// TestLongCallReported: a host call that spins 250 ms against a 100 ms
// threshold is reported once (engine, task, file:line, duration) and
// counted in the engine's metrics; a 1 ms call is not (the threshold
// leaves room for a loaded machine that descheduled the spinning thread).
func TestLongCallReported(t *testing.T) {
	got := make(chan sched.LongRun, 4)
	rt := testkit.Runtime(t, jade.Options{Workers: 1, LongCall: 100 * time.Millisecond,
		OnLong: func(r sched.LongRun) { got <- r }})
	registerSpin(t, rt)
	p := testkit.Load(t, rt, spinProgram)
	require.Equal(t, sched.Success, testkit.Run(t, rt, p, "main", vmloop.I64(250)).Kind)
	var r sched.LongRun
	select {
	case r = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("no long call reported")
	}
	require.Equal(t, "host call", r.What)
	require.Equal(t, "main", r.Engine)
	require.Equal(t, "main", r.Func)
	require.GreaterOrEqual(t, r.Duration, 250*time.Millisecond)
	require.Equal(t, 100*time.Millisecond, r.Threshold)
	require.Contains(t, r.String(), "long host call: engine main task ")
	require.Positive(t, r.Line)
	require.Contains(t, r.String(), fmt.Sprintf(" at TestLongCallReported.jasm:%d (main) ran ", r.Line))
	require.Equal(t, uint64(1), rt.Observe().Metrics().Engines[0].LongCalls)
	require.Zero(t, rt.Observe().Metrics().Engines[0].LongSlices, "long slices are off")

	require.Equal(t, sched.Success, testkit.Run(t, rt, p, "main", vmloop.I64(1)).Kind)
	require.Equal(t, uint64(1), rt.Observe().Metrics().Engines[0].LongCalls, "a 1 ms call is not long")
}

// TestFlightDumpOnLongSlice: with the flight recorder on, a slice longer
// than the engine's threshold is logged and dumps the recorder to a file
// that holds that slice and its long-slice event.
func TestFlightDumpOnLongSlice(t *testing.T) {
	dir := t.TempDir()
	rt := testkit.Runtime(t, jade.Options{Workers: 2, FlightEvents: 4096, LongSlice: 10 * time.Millisecond, FlightDir: dir})
	require.True(t, hostbus.Scheduler(rt).FlightRecorder())
	registerSpin(t, rt)
	p := testkit.Load(t, rt, spinProgram)
	require.Equal(t, sched.Success, testkit.Run(t, rt, p, "main", vmloop.I64(30)).Kind)
	testkit.WaitFor(t, func() bool { return rt.Observe().LastFlightDump() != "" })
	b, err := os.ReadFile(rt.Observe().LastFlightDump())
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(rt.Observe().LastFlightDump(), dir))
	tr := parseTrace(t, b)
	var long, slice bool
	for _, e := range tr.TraceEvents {
		if e.Name == "long" && e.Args["what"] == "slice" && e.Args["durNs"].(float64) >= 30e6 {
			long = true
		}
		if e.Ph == "X" && e.Cat == "task" && e.Name == "main" && e.Dur >= 30_000 && e.Args["end"] == "complete" {
			slice = true
		}
	}
	require.True(t, long, "no long-slice event in the dump")
	require.True(t, slice, "no 30 ms slice of main in the dump")
	require.Equal(t, uint64(1), rt.Observe().Metrics().Engines[0].LongSlices)

	// On demand too, and the dump is a valid trace.
	var buf bytes.Buffer
	require.NoError(t, rt.Observe().DumpTrace(&buf))
	parseTrace(t, buf.Bytes())
}

// TestDumpTraceOff: without the flight recorder a dump is refused.
func TestDumpTraceOff(t *testing.T) {
	t.Setenv(sched.FlightEnv, "")
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	require.ErrorContains(t, rt.Observe().DumpTrace(&bytes.Buffer{}), "flight recorder is off")
}

// TestDumpWhileRunning dumps the flight recorder again and again while
// the workers run fan-outs and a full trace starts and stops: every dump
// is a valid trace, and the runs are undisturbed. With -race it checks
// the rings' protocol (a dump reads them only while the writers stop).
func TestDumpWhileRunning(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 2, FlightEvents: 2048})
	p := testkit.Load(t, rt, testkit.Fanout)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 20; i++ {
			if o := testkit.RunFanout(t, rt, p, 500); o.Kind != sched.Success || o.Value.Int() != 124_750 {
				t.Errorf("fanout: %v", o)
				return
			}
		}
	}()
	for i := 0; ; i++ {
		select {
		case <-done:
			return
		default:
		}
		var buf bytes.Buffer
		require.NoError(t, rt.Observe().DumpTrace(&buf))
		parseTrace(t, buf.Bytes())
		if i%4 == 0 {
			var tb bytes.Buffer
			require.NoError(t, rt.Observe().StartTrace(&tb))
			time.Sleep(time.Millisecond)
			require.NoError(t, rt.Observe().StopTrace())
			parseTrace(t, tb.Bytes())
		}
	}
}

// TestTraceGC: a GC cycle during a trace shows on the host track.
func TestTraceGC(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	for try := 0; try < 5; try++ {
		var buf bytes.Buffer
		require.NoError(t, rt.Observe().StartTrace(&buf))
		runtime.GC()
		runtime.GC() // the first cycle's cleanup reports it after this one
		time.Sleep(20 * time.Millisecond)
		require.NoError(t, rt.Observe().StopTrace())
		if bytes.Contains(buf.Bytes(), []byte(`"cat":"gc"`)) {
			return
		}
	}
	t.Fatal("no GC cycle in 5 traces")
}

// TestLongWaitReported: a task that waits 20 ms in the run queue behind
// a host call holding the only worker is a latency outlier against a
// 5 ms LongWait (every enqueue sampled), reported and counted.
func TestLongWaitReported(t *testing.T) {
	got := make(chan sched.LongRun, 4)
	rt := testkit.Runtime(t, jade.Options{Workers: 1, LatencySample: 1, LongWait: 5 * time.Millisecond,
		OnLong: func(r sched.LongRun) { got <- r }})
	registerSpin(t, rt)
	p := testkit.Load(t, rt, spinProgram)
	hog, err := rt.Spawn(p, "main", vmloop.I64(30))
	require.NoError(t, err)
	testkit.WaitFor(t, func() bool { return rt.Observe().Metrics().RunnableTasks == 0 }) // the hog is running
	time.Sleep(5 * time.Millisecond)
	quick, err := rt.Spawn(p, "main", vmloop.I64(0))
	require.NoError(t, err)
	for _, task := range []*jade.Task{hog, quick} {
		o, err := task.Wait(context.Background())
		require.NoError(t, err)
		require.Equal(t, sched.Success, o.Kind)
	}
	var r sched.LongRun
	select {
	case r = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("no long wait reported")
	}
	require.Equal(t, "run-queue wait", r.What)
	require.Equal(t, quick.ID(), r.Task)
	require.GreaterOrEqual(t, r.Duration, 5*time.Millisecond)
	require.Contains(t, r.String(), "long run-queue wait: engine main task ")
	require.GreaterOrEqual(t, rt.Observe().Metrics().Engines[0].LongWaits, uint64(1))
}

// TestTraceChainSpawns traces a chain of spawns, where each link's spawn
// is folded into the end of its spawner's slice (the child waits in the
// lifo slot): every link still shows a spawn inside its spawner's slice
// on that slice's track, and every arrow that leaves a spawn ends at a
// dispatch no earlier than it.
func TestTraceChainSpawns(t *testing.T) {
	const links = 2000
	rt := testkit.Runtime(t, jade.Options{Workers: 2})
	p, err := rt.Load("chained.jasm", []byte(chainedSrc))
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, rt.Observe().StartTrace(&buf))
	_, err = rt.Run(context.Background(), p, "main", vmloop.I64(links), rt.NewEvent())
	require.NoError(t, err)
	require.NoError(t, rt.Observe().StopTrace())

	tr := parseTrace(t, buf.Bytes())
	type slice struct {
		tid      int
		from, to float64
	}
	slices := map[uint64][]slice{}
	for _, e := range tr.TraceEvents {
		if e.Ph == "X" && e.Cat == "task" {
			id := uint64(e.Args["task"].(float64))
			slices[id] = append(slices[id], slice{e.Tid, e.Ts, e.Ts + e.Dur})
		}
	}
	spawned := map[uint64]bool{}
	starts, ends := map[uint64]float64{}, map[uint64]float64{}
	const eps = 1e-3
	for _, e := range tr.TraceEvents {
		switch {
		case e.Ph == "i" && e.Name == "spawn":
			child, by := uint64(e.Args["task"].(float64)), uint64(e.Args["by"].(float64))
			require.False(t, spawned[child], "task %d spawned twice", child)
			spawned[child] = true
			in := by == 0 // main, spawned by the host
			for _, s := range slices[by] {
				in = in || s.tid == e.Tid && e.Ts >= s.from-eps && e.Ts <= s.to+eps
			}
			require.True(t, in, "the spawn of %d is outside every slice of its spawner %d", child, by)
		case e.Ph == "s":
			starts[e.ID] = e.Ts
		case e.Ph == "f":
			ends[e.ID] = e.Ts
		}
	}
	require.Len(t, spawned, links+2, "a spawn of main and of every link")
	for id, s := range starts {
		f, ok := ends[id]
		require.True(t, ok, "arrow %d has no end", id)
		require.GreaterOrEqual(t, f, s-eps, "arrow %d ends before it starts", id)
	}
	requireNested(t, tr)
}
