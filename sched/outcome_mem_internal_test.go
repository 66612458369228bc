package sched

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
)

// deepStack is a stack of n frames, the most a trap keeps.
func deepStack(n int) vmloop.Stack {
	s := vmloop.Stack{Depth: 500}
	for i := range n {
		s.Frames = append(s.Frames, vmloop.StackFrame{Func: "deep", PC: i, File: "d.jasm", Line: 10 + i})
	}
	return s
}

// TestChargeOutcomeOverFullBudget: an outcome that does not fit a full
// budget keeps what the task did. A trap keeps its code, position, message
// and stack (they are bounded; it used to become "trap at @-1: heap limit:
// the task's result of N bytes ...", its real reason lost); an uncaught
// error becomes a trap that names the error and where it was thrown; a
// result becomes a trap with no position, written without "@-1".
func TestChargeOutcomeOverFullBudget(t *testing.T) {
	full := func() *Task {
		e := &Engine{name: "main", mem: vmloop.NewBudget(1 << 20)}
		e.mem.Force(1 << 20)
		return &Task{id: 7, engine: e}
	}
	trap := vmloop.TrapInfo{Code: vmloop.TrapHeapLimit, Msg: "anew of 800000 bytes exceeds engine \"main\"'s memory limit", Func: "fill", PC: 12, File: "f.jasm", Line: 30}

	o := Outcome{Kind: Trapped, Trap: trap, Stack: deepStack(vmloop.MaxStackFrames)}
	require.Greater(t, outcomeBytes(&o), taskBytes, "the stack makes it larger than the task's own share")
	tk := full()
	n := tk.chargeOutcome(&o)
	require.Equal(t, Trapped, o.Kind)
	require.Equal(t, trap, o.Trap, "the trap's reason is kept")
	require.Len(t, o.Stack.Frames, vmloop.MaxStackFrames)
	require.Equal(t, outcomeBytes(&o), n)
	require.Equal(t, int64(1<<20)+n, tk.engine.mem.Used(), "counted, over the limit")

	err := vmloop.Err(vmloop.ErrKindError, strings.Repeat("x", 100_000))
	o = Outcome{Kind: Failure, Value: err, Stack: deepStack(3)}
	full().chargeOutcome(&o)
	require.Equal(t, Trapped, o.Kind)
	require.Equal(t, "deep", o.Trap.Func)
	require.Equal(t, 0, o.Trap.PC)
	require.Contains(t, o.Trap.Msg, "uncaught Error: xxx")
	require.Contains(t, o.Trap.Msg, "the thrown error of ")
	require.Less(t, len(o.Trap.Msg), 1000, "the error's message is clipped")
	require.Len(t, o.Stack.Frames, 3)
	require.NotContains(t, o.Trap.Error(), "@-1")

	o = Outcome{Kind: Success, Value: vmloop.StrArray(make([]string, 100_000))}
	full().chargeOutcome(&o)
	require.Equal(t, Trapped, o.Kind)
	require.Contains(t, o.Trap.Msg, "the task's result of ")
	require.True(t, strings.HasPrefix(o.Trap.Error(), "trap: heap limit: the task's result of "), o.Trap.Error())
}
