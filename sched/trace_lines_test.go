package sched_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
)

// TestTraceNamesLines: a task slice's "at" and "endAt" name file:line and
// the function: main's first slice starts at line 3 (its first
// instruction) and ends suspended at line 4, the join it waits in.
func TestTraceNamesLines(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	p := testkit.Load(t, rt, `.func main() -> i64
  .local c:ref, v:i64
  spawn c, child
  joini v, c
  ret v
.end
.func child() -> i64
  .local v:i64
  const v, 7
  ret v
.end`)
	var buf bytes.Buffer
	require.NoError(t, rt.Observe().StartTrace(&buf))
	require.Equal(t, sched.Success, testkit.Run(t, rt, p, "main").Kind)
	require.NoError(t, rt.Observe().StopTrace())
	file := t.Name() + ".jasm"
	var suspended bool
	for _, e := range parseTrace(t, buf.Bytes()).TraceEvents {
		if e.Ph != "X" || e.Cat != "task" || e.Name != "main" || e.Args["end"] != "suspend" {
			continue
		}
		require.Equal(t, file+":3 (main)", e.Args["at"])
		require.Equal(t, file+":4 (main)", e.Args["endAt"])
		suspended = true
	}
	require.True(t, suspended, "no slice of main ended suspended:\n%s", buf.String())
}
