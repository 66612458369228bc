package sched_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// TestFanOutRecordsStayForTheNext: a fan-out's children, whose last
// references go when main's heap (their handles' array) does at its end,
// come back to the worker's cache and the spares, not to taskPool, and
// the next fan-out takes them from there; a garbage collection later,
// the spares let go of what no spawn took in the cycle.
func TestFanOutRecordsStayForTheNext(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	p := testkit.Load(t, rt, fanOutMain+`
.func child(x:i64) -> i64
  ret   x
.end`)
	s := hostbus.Scheduler(rt)
	const n = 3000
	testkit.Run(t, rt, p, "main", vmloop.I64(n)) // the first makes them
	testkit.WaitFor(t, func() bool { return s.LiveTasks() == 0 })
	made, pooled := sched.TaskRecordsMade(), sched.TaskRecordsPooled()
	for range 3 {
		o := testkit.Run(t, rt, p, "main", vmloop.I64(n))
		require.Equal(t, sched.Success, o.Kind, "%v", o)
		testkit.WaitFor(t, func() bool { return s.LiveTasks() == 0 })
	}
	// Another test's leftovers may pool a record meanwhile (the counter
	// is the package's): the fan-outs' would be thousands.
	require.Less(t, sched.TaskRecordsPooled()-pooled, uint64(n/10), "records went to taskPool")
	require.Less(t, sched.TaskRecordsMade()-made, uint64(n/10), "records were made again")
	require.Greater(t, s.SpareRecords(), n/2)
	testkit.WaitFor(t, func() bool {
		runtime.GC()
		return s.SpareRecords() == 0
	}, "the spares let go after collections")
}
