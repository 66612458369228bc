package sched

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
	"github.com/jadevm/jade/vmloop/jasm"
)

// verified assembles and verifies src.
func verified(t *testing.T, src string) *vmloop.Program {
	t.Helper()
	p, err := jasm.Assemble("t.jasm", []byte(src))
	require.NoError(t, err)
	require.NoError(t, vmloop.Verify(p, nil))
	return p
}

// runToEnd runs function name of p as a host task of e and waits (a
// minute at most) for its outcome.
func runToEnd(t *testing.T, s *Scheduler, ctl *Control, e *Engine, p *vmloop.Program, name string, args ...vmloop.Value) (*Task, Outcome) {
	t.Helper()
	tk, err := ctl.Prepare(nil, e, p, p.FuncIndex(name), args)
	require.NoError(t, err)
	ctl.Launch(nil, tk)
	select {
	case <-tk.Done():
	case <-time.After(time.Minute):
		t.Fatalf("%s did not end: %+v", name, s.Tasks())
	}
	o, _ := tk.Outcome()
	return tk, o
}

// endAll waits for every task of s to end, then shuts it down.
func endAll(t *testing.T, s *Scheduler, ctl *Control) {
	t.Helper()
	require.Eventually(t, func() bool { return s.LiveTasks() == 0 }, time.Minute, time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.Empty(t, ctl.Shutdown(ctx))
}
