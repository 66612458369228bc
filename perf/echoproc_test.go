package perf

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bench"
	"github.com/jadevm/jade/internal/feature"
)

// echoProcChild, set in a child's environment, makes this test binary
// run bench.EchoProcMain instead of the tests, as `jade echoproc` does.
const echoProcChild = "JADE_PERF_ECHOPROC_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(echoProcChild) == "1" {
		os.Exit(bench.EchoProcMain(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestEchoProcShape runs the out-of-process shape small (1 and 10
// connections, 200 ms a run, one rep, no system-call counter): every
// round trip of every run echoed its own message, and the report has the
// rows of both counts. Not a timing test: the gate's verdict is whatever
// this machine measured.
func TestEchoProcShape(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes and measures")
	}
	feature.Exec(t, os.Args[0])
	t.Setenv(echoProcChild, "1")
	sh := echoProcShape{conns: []int{1, 10}, warmup: 20 * time.Millisecond, measure: 200 * time.Millisecond,
		reps: 1, syscalls: SyscallsNone, child: []string{os.Args[0]}}
	rows, err := sh.run()
	require.NoError(t, err)
	require.Len(t, rows, 2)
	for i, row := range rows {
		require.Equal(t, sh.conns[i], row.conns)
		for _, runs := range [][]echoRun{row.jade, row.gnet} {
			require.Len(t, runs, 1)
			l := runs[0].load
			require.Equal(t, row.conns, l.Conns)
			require.Positive(t, l.RoundTrips)
			require.Equal(t, l.RoundTrips, l.Checked, "every reply was compared with its message")
			require.Zero(t, l.Mismatches)
		}
		rs := row.results()
		name := fmt.Sprintf("echo_proc_%d", row.conns)
		metrics := map[string]Result{}
		for _, r := range rs {
			require.Equal(t, name, r.Name)
			metrics[r.Metric] = r
		}
		for _, m := range []string{"round trips/s", "p50 latency", "p99 latency", "p99.9 latency", "max latency",
			"server CPU per rt", "client CPU busy", "run-queue wait"} {
			require.Contains(t, metrics, m)
		}
		tp := metrics["round trips/s"]
		require.Positive(t, tp.Jade)
		require.Positive(t, tp.Baseline)
		require.NotNil(t, tp.Pass, "the gate is reported")
		require.Contains(t, metrics, "syscalls per rt")
		require.Contains(t, metrics["syscalls per rt"].Absent, "--syscalls none")
	}
}

// TestEchoProcAbsent: without a child command the scenario says so.
func TestEchoProcAbsent(t *testing.T) {
	rs, err := echoProc(&Options{})
	require.NoError(t, err)
	require.Len(t, rs, 1)
	require.Contains(t, rs[0].Absent, "jade perf")
}

// TestSyscallSummaries parses the two counters' output forms.
func TestSyscallSummaries(t *testing.T) {
	strace := `% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 61.20    0.010000           4      2500           io_uring_enter
 20.00    0.003000          30       100        12 futex
  1.00    0.000100           1        40           nanosleep
------ ----------- ----------- --------- --------- ----------------
100.00    0.013100           4      2640        12 total
`
	m, err := parseStrace([]byte(strace))
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"io_uring_enter": 2500, "futex": 100, "nanosleep": 40}, m)
	require.Equal(t, int64(2640), sysTotal(m))
	require.Equal(t, "io_uring_enter 2.500, futex 0.100", sysTop(m, 1000, 2))

	perf := `# started on Thu Dec  3 12:00:00 2026

     0.100163156,654,,raw_syscalls:sys_enter,5705569,100.00,,
     0.100163156,300,,syscalls:sys_enter_futex,5705569,100.00,,
     0.100163156,0,,syscalls:sys_enter_read,5705569,100.00,,
     0.200300100,346,,raw_syscalls:sys_enter,5705569,100.00,,
     0.200300100,100,,syscalls:sys_enter_futex,5705569,100.00,,
     0.200300100,<not counted>,,syscalls:sys_enter_write,0,100.00,,
`
	m, err = parsePerfStat([]byte(perf))
	require.NoError(t, err)
	require.Equal(t, int64(1000), sysTotal(m))
	require.Equal(t, int64(400), m["futex"])
	require.NotContains(t, m, "read")
	require.Equal(t, "futex 0.400", sysTop(m, 1000, 5))
	_, err = parsePerfStat([]byte("# started\n"))
	require.Error(t, err)

	_, why := syscallTool("bogus")
	require.True(t, strings.Contains(why, "unknown"), why)
	tool, why := syscallTool(SyscallsNone)
	require.Empty(t, tool)
	require.Contains(t, why, "off")
}
