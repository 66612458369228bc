package sched

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/timerwheel"
	"github.com/jadevm/jade/vmloop"
	"github.com/jadevm/jade/vmloop/jasm"
)

// timeoutDispatcher records the requests it gets and, at task.cancelled, the
// timeout set for the task's next wait; it answers every request at once.
type timeoutDispatcher struct {
	c    *Control
	mu   sync.Mutex
	seen []string
	d    int64
	ok   bool
}

func (d *timeoutDispatcher) Intrinsic(t *Task, req *vmloop.Request) Action {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.seen = append(d.seen, req.Intr.Name)
	if req.Intr.ID == vmloop.IntrCancelled {
		d.d, d.ok = d.c.TakeTimeout(t)
	}
	ex, err := t.ex(), error(nil)
	if req.Intr.Result == vmloop.TVoid {
		err = ex.CompleteVoid()
	} else {
		err = ex.Complete(vmloop.I64(0))
	}
	if err != nil {
		return ActTrapped
	}
	return ActContinue
}
func (d *timeoutDispatcher) Resume(*Task, *vmloop.Request) Action { return ActTrapped }
func (d *timeoutDispatcher) Abandon(*Task, *vmloop.Request, bool) {}

// TestTimeoutAnsweredInVM: time.timeout in a task whose engine has a
// timer wheel is answered in the VM loop (no request reaches the
// dispatcher) and sets the timeout the task's next wait takes; without a
// wheel it stays a request, for the scheduler's side to refuse.
func TestTimeoutAnsweredInVM(t *testing.T) {
	p, err := jasm.Assemble("t.jasm", []byte(".func f() -> i64\n  .local n:i64, z:i64\n  const n, 7000\n  intr _, time.timeout, n\n  cancelled z\n  ret n\n.end\n"))
	require.NoError(t, err)
	require.NoError(t, vmloop.Verify(p, nil))
	wheel := timerwheel.DefaultConfig()
	for _, c := range []struct {
		name string
		cfg  EngineRuntimeConfig
		seen []string
		ok   bool
	}{
		{"with a wheel", EngineRuntimeConfig{TimerWheel: &wheel}, []string{"task.cancelled"}, true},
		{"without one", EngineRuntimeConfig{}, []string{"time.timeout", "task.cancelled"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := &timeoutDispatcher{}
			_, ctl, err := New(Config{Workers: 1, Dispatcher: d})
			require.NoError(t, err)
			d.c = ctl
			e, err := ctl.RegisterEngine("e", c.cfg)
			require.NoError(t, err)
			require.NoError(t, ctl.Start())
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				require.Empty(t, ctl.Shutdown(ctx))
			}()
			tk, err := ctl.Prepare(nil, e, p, 0, nil)
			require.NoError(t, err)
			ctl.Launch(nil, tk)
			select {
			case <-tk.Done():
			case <-time.After(time.Minute):
				t.Fatal("the task did not end")
			}
			o, _ := tk.Outcome()
			require.Equal(t, Success, o.Kind, "%v", o)
			d.mu.Lock()
			defer d.mu.Unlock()
			require.Equal(t, c.seen, d.seen)
			if c.ok {
				require.True(t, d.ok)
				require.Equal(t, int64(7000), d.d, "the timeout of the next wait")
			}
		})
	}
}
