package vmloop

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTrimGivesBackARecycledStack: an Exec recycled after a deep task and
// reset for a small one keeps the deep stacks; Trim copies them into ones
// of the small task's size, gives the difference back to the budget, and
// the task runs on. Stacks under the floors are left alone.
func TestTrimGivesBackARecycledStack(t *testing.T) {
	p := itProg(t, nil, itFib(0), itFn("small", "(i64)->i64", 2, "ret r0"), itDown(2))
	b := NewBudget(1 << 30)
	lim := DefaultLimits
	lim.Memory = b
	e, err := NewExec(p, p.FuncIndex("down"), []Value{I64(30)}, lim, 1)
	require.NoError(t, err)
	require.Equal(t, SigCompleted, itRun(t, e, 1<<20))
	require.Equal(t, int64(0), e.Result().Int())
	e.Recycle()
	require.NoError(t, e.Reset(p, p.FuncIndex("small"), []Value{I64(7)}, lim, 1))
	deep := e.Footprint()
	require.Greater(t, deep.Regs, 8*trimRegs, "the deep task's registers are kept")
	require.Greater(t, deep.Frames, 24*trimFrames, "and its frames")
	used := b.Used()

	e.Trim()
	f := e.Footprint()
	wantRegs := 8 * headroom(2) // the small task's registers
	if deep.Regs <= 4*wantRegs {
		wantRegs = deep.Regs // jadecheck: every frame has MaxRegs, the stack is not loose
	}
	require.Equal(t, Footprint{Regs: wantRegs, Frames: 24, Handles: deep.Handles}, f)
	counted := func(fp Footprint) int64 { return overGrant(int64(fp.Regs + fp.Frames)) }
	require.Equal(t, used-(counted(deep)-counted(f)), b.Used(), "the budget gets the difference back")
	require.Equal(t, SigCompleted, itRun(t, e, 1000))
	require.Equal(t, int64(7), e.Result().Int())

	// Under the floors nothing moves.
	e.Recycle()
	require.NoError(t, e.Reset(p, p.FuncIndex("fib"), []Value{I64(10)}, lim, 1))
	before := e.Footprint()
	e.Trim()
	require.Equal(t, before, e.Footprint())
	require.Equal(t, SigCompleted, itRun(t, e, 1<<20))
	require.Equal(t, int64(55), e.Result().Int())
	e.Free()
	require.Zero(t, b.Used(), "every byte balanced")
}

// itDown is down(d), which recurses d calls deep with 20 registers a
// frame, as function self of its program.
func itDown(self int) Function {
	return itFn("down", "(i64)->i64", 20, fmt.Sprintf(`
		jlti r0, 1, base
		subi r1, r0, 1
		call r1, 1, %d
		ret r1
	base:
		ret r0`, self))
}
