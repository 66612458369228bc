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
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// allocSrc: churn allocates n buffers of 1000 bytes and frees each; keep
// allocates n and keeps them until the event is signalled.
const allocSrc = `.func churn(n:i64) -> i64
  .local i:i64, sz:i64, b:ref
  const i, 0
  const sz, 1000
l:
  jge   i, n, d
  addi  i, i, 1
  bnew  b, sz   ; churn's
  free  b
  jmp   l
d:
  ret   i
.end

.func keep(n:i64, ev:ref) -> i64
  .local i:i64, sz:i64, b:ref
  const i, 0
  const sz, 1000
l:
  jge   i, n, d
  bnew  b, sz   ; keep's
  addi  i, i, 1
  jmp   l
d:
  evwait ev
  ret   i
.end
`

// lineOf returns the line of allocSrc that contains s.
func lineOf(t *testing.T, s string) string {
	for i, l := range strings.Split(allocSrc, "\n") {
		if strings.Contains(l, s) {
			return "alloc.jasm:" + strconv.Itoa(i+1)
		}
	}
	t.Fatalf("no line %q", s)
	return ""
}

func loadAlloc(t *testing.T, rt *jade.Runtime) *vmloop.Program {
	t.Helper()
	p, err := rt.Load("alloc.jasm", []byte(allocSrc))
	require.NoError(t, err)
	return p
}

// heapTotals writes and parses hp and returns its totals per sample type.
func heapTotals(t *testing.T, hp *jprof.HeapProfile) map[string]int64 {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, hp.Write(&buf))
	prof, err := profile.Parse(&buf)
	require.NoError(t, err)
	require.NoError(t, prof.CheckValid())
	tot := map[string]int64{}
	for _, s := range prof.Sample {
		for i, st := range prof.SampleType {
			tot[st.Type] += s.Value[i]
		}
	}
	return tot
}

func heapProfile(t *testing.T, hp *jprof.HeapProfile) *profile.Profile {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, hp.Write(&buf))
	prof, err := profile.Parse(&buf)
	require.NoError(t, err)
	return prof
}

// near reports whether got is within 30 % of want (the estimate of a
// sampled profile: at 16 KiB, some 250 samples per 4 MB).
func near(got, want int64) bool { return got > want*7/10 && got < want*13/10 }

// TestHeapProfile: bytes by allocation site, allocated and in use, with
// the engine label; in use drops when the objects are freed (FREE, and
// the end of the task that holds them).
func TestHeapProfile(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	p := loadAlloc(t, rt)
	hp, err := jprof.StartHeap(hostbus.Scheduler(rt), 16<<10)
	require.NoError(t, err)
	defer hp.Stop()
	_, err = jprof.StartHeap(nil, 0)
	require.ErrorContains(t, err, "already installed", "two heap profiles at once")

	const n = 4000
	size := int64(32 + 1000) // accounted: header and payload
	churn, err := rt.Spawn(p, "churn", vmloop.I64(n))
	require.NoError(t, err)
	_, err = churn.Wait(context.Background())
	require.NoError(t, err)
	ev := rt.NewEvent()
	keep, err := rt.Spawn(p, "keep", vmloop.I64(n), ev)
	require.NoError(t, err)
	for deadline := time.Now().Add(10 * time.Second); hostbus.Task(keep).State() != sched.Waiting; {
		require.True(t, time.Now().Before(deadline), "keep never waited")
		time.Sleep(time.Millisecond)
	}

	prof := heapProfile(t, hp)
	require.Equal(t, "inuse_space", prof.DefaultSampleType)
	alloc, _ := flat(t, prof, "alloc_space")
	inuse, byLine := flat(t, prof, "inuse_space")
	require.True(t, near(alloc["churn"], n*size), "churn allocated %d, want about %d", alloc["churn"], n*size)
	require.True(t, near(alloc["keep"], n*size), "keep allocated %d, want about %d", alloc["keep"], n*size)
	require.Zero(t, inuse["churn"], "churn freed every buffer")
	require.True(t, near(inuse["keep"], n*size), "keep holds %d, want about %d", inuse["keep"], n*size)
	require.Equal(t, inuse["keep"], byLine[lineOf(t, "keep's")], "keep's bytes are at its bnew: %v", byLine)
	_, allocLines := flat(t, prof, "alloc_space")
	require.Equal(t, alloc["churn"], allocLines[lineOf(t, "churn's")], "churn's bytes are at its bnew: %v", allocLines)
	for _, s := range prof.Sample {
		require.Equal(t, []string{"main"}, s.Label[jprof.LabelEngine])
	}

	require.NoError(t, rt.Signal(ev))
	_, err = keep.Wait(context.Background())
	require.NoError(t, err)
	tot := heapTotals(t, hp)
	require.Zero(t, tot["inuse_space"], "the ended task's heap was freed")
	require.True(t, near(tot["alloc_space"], 2*n*size), "allocated %d in all", tot["alloc_space"])

	require.NoError(t, hp.Stop())
	require.Error(t, hp.Stop())
	hp2, err := jprof.StartHeap(nil, 0)
	require.NoError(t, err, "a heap profile starts again after Stop")
	require.NoError(t, hp2.Stop())
}

// TestHeapProfileTaskNames: the sampled allocations of a named task carry
// its name (jade_task_name), those of an unnamed one no name label; no
// heap sample carries a task id.
func TestHeapProfileTaskNames(t *testing.T) {
	rt := testkit.Runtime(t, jade.Options{Workers: 2})
	p := loadAlloc(t, rt)
	hp, err := jprof.StartHeap(hostbus.Scheduler(rt), 16<<10)
	require.NoError(t, err)
	defer hp.Stop()
	named, err := rt.SpawnWith(jade.SpawnOptions{Name: "churner"}, p, "churn", vmloop.I64(2000))
	require.NoError(t, err)
	plain, err := rt.Spawn(p, "churn", vmloop.I64(2000))
	require.NoError(t, err)
	for _, tk := range []*jade.Task{named, plain} {
		_, err = tk.Wait(context.Background())
		require.NoError(t, err)
	}
	var withName, without int
	for _, s := range heapProfile(t, hp).Sample {
		require.Empty(t, s.Label[jprof.LabelTask], "heap samples are not split by task id")
		switch n := s.Label[jprof.LabelTaskName]; {
		case len(n) == 0:
			without++
		default:
			require.Equal(t, []string{"churner"}, n)
			withName++
		}
	}
	require.Positive(t, withName, "the named task's allocations")
	require.Positive(t, without, "the unnamed task's allocations")
}
