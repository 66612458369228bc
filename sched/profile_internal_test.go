package sched

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
	"github.com/jadevm/jade/vmloop/jasm"
)

type recSampler struct{ stacks [][]vmloop.ProfFrame }

func (r *recSampler) Sample(t *Task, stack []vmloop.ProfFrame) {
	r.stacks = append(r.stacks, append([]vmloop.ProfFrame(nil), stack...))
}

// TestSamplePreempted: a slice stopped by a fresh sample request records
// the sample and goes on with the stop cleared, unless its budget is
// spent or a cancel or a kick stopped it too; a stale request (another
// dispatch) records nothing.
func TestSamplePreempted(t *testing.T) {
	p, err := jasm.Assemble("s.jasm", []byte(".func f() -> i64\n  .local i:i64\n  const i, 0\nl:\n  addi i, i, 1\n  jmp l\n.end\n"))
	require.NoError(t, err)
	require.NoError(t, vmloop.Verify(p, nil))
	tk := &Task{id: 1}
	ex := tk.ex()
	require.NoError(t, ex.Reset(p, 0, nil, vmloop.Limits{}, 1))
	ex.Stop()
	require.Equal(t, vmloop.SigPreempted, ex.Run(1000))
	rec := &recSampler{}
	s := &Scheduler{}
	require.NoError(t, s.StartSampling(rec))
	w := &worker{s: s}
	w.dispatches.add(5)

	ask := func() { w.sampleReq.Store(w.dispatches.load() + 1); ex.Stop() }
	ask()
	require.True(t, w.samplePreempted(tk, 100), "a sample's stop ends the slice")
	require.False(t, ex.Stopped(), "the sample's stop is left set")
	require.Equal(t, [][]vmloop.ProfFrame{{{Fn: 0, PC: 1}}}, rec.stacks, "the stack at the loop's head")

	ask()
	require.False(t, w.samplePreempted(tk, 0), "a spent budget goes on")
	require.Len(t, rec.stacks, 2)

	ask()
	s.kick.Store(true)
	require.False(t, w.samplePreempted(tk, 100), "a kick's stop is lost")
	s.kick.Store(false)

	ask()
	tk.flags.Or(flagCancel)
	require.False(t, w.samplePreempted(tk, 100), "a cancel's stop is lost")
	tk.flags.And(^uint32(flagCancel))
	require.Len(t, rec.stacks, 4)

	ask()
	w.dispatches.add(1) // the request was made during the last dispatch
	require.True(t, w.samplePreempted(tk, 100))
	require.Len(t, rec.stacks, 4, "a stale request was sampled")
	require.Zero(t, w.sampleReq.Load())
}
