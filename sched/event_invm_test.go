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

// eventDispatcher answers event.wait (and a signal that reaches it) as
// the bus does and records every request it gets.
type eventDispatcher struct {
	c       *Control
	mu      sync.Mutex
	seen    []string
	resumed []string
}

func (d *eventDispatcher) Intrinsic(t *Task, req *vmloop.Request) Action {
	d.mu.Lock()
	d.seen = append(d.seen, req.Intr.Name)
	d.mu.Unlock()
	ex := t.ex()
	switch req.Intr.ID {
	case vmloop.IntrEventWait, vmloop.IntrEventSignal:
		obj, err := ex.ArgObj(0, vmloop.KindEvent)
		if err != nil {
			ti := err.(vmloop.TrapInfo)
			ex.SetTrap(ti.Code, ti.Msg)
			return ActTrapped
		}
		if req.Intr.ID == vmloop.IntrEventSignal {
			d.c.EventSignal(t, obj.(*Event))
		} else if !d.c.EventWait(t, obj.(*Event)) {
			return ActSuspend
		}
	}
	if ex.CompleteVoid() != nil {
		return ActTrapped
	}
	return ActContinue
}
func (d *eventDispatcher) Resume(t *Task, req *vmloop.Request) Action {
	d.mu.Lock()
	d.resumed = append(d.resumed, req.Intr.Name)
	d.mu.Unlock()
	if t.ex().CompleteVoid() != nil {
		return ActTrapped
	}
	return ActContinue
}
func (d *eventDispatcher) Abandon(*Task, *vmloop.Request, bool) {}

// TestEventAnsweredInVM: event.signal and event.wait from a task, as
// EVSIGNAL, EVWAIT or INTR, are answered in the VM loop (no request
// reaches the dispatcher): a signal wakes the task waiting on the event or
// is kept, a wait takes a kept signal or parks, and the parked wait ends
// without the dispatcher's Resume. A bad handle and a wait that a timeout
// bounds still go to the dispatcher (and its Resume).
// Each costs the task's slice what a request would.
func TestEventAnsweredInVM(t *testing.T) {
	const src = `.func waiter(ev:ref) -> i64
  .local n:i64
  evwait ev
  const n, 1
  ret n
.end
.func signaller(ev:ref) -> i64
  .local n:i64
  evsignal ev
  const n, 2
  ret n
.end
.func intr(ev:ref) -> i64
  .local n:i64
  intr _, event.signal, ev
  evwait ev
  const n, 3
  ret n
.end
.func kept(ev:ref) -> i64
  .local n:i64
  evsignal ev
  evwait ev
  intr _, event.signal, ev
  intr _, event.wait, ev
  const n, 4
  ret n
.end
.func timed(ev:ref) -> i64
  .local n:i64
  const n, 1000000000
  intr _, time.timeout, n
  evwait ev
  ret n
.end
.func many(ev:ref) -> i64
  .local i:i64, n:i64
  const i, 0
  const n, 1000
loop:
  jge i, n, done
  evsignal ev
  addi i, i, 1
  jmp loop
done:
  ret i
.end
.func bad(ev:ref) -> i64
  .local n:i64
  free ev
  evsignal ev
  const n, 5
  ret n
.end
`
	p, err := jasm.Assemble("t.jasm", []byte(src))
	require.NoError(t, err)
	require.NoError(t, vmloop.Verify(p, nil))
	for _, workers := range []int{1, 2} {
		d := &eventDispatcher{}
		_, ctl, err := New(Config{Workers: workers, Dispatcher: d})
		require.NoError(t, err)
		d.c = ctl
		wheel := timerwheel.DefaultConfig()
		e, err := ctl.RegisterEngine("e", EngineRuntimeConfig{TimerWheel: &wheel})
		require.NoError(t, err)
		require.NoError(t, ctl.Start())
		run := func(name string, ev *Event) *Task {
			tk, err := ctl.Prepare(nil, e, p, p.FuncIndex(name), []vmloop.Value{vmloop.Ext(vmloop.KindEvent, ev)})
			require.NoError(t, err)
			ctl.Launch(nil, tk)
			return tk
		}
		end := func(tk *Task) Outcome {
			select {
			case <-tk.Done():
			case <-time.After(time.Minute):
				t.Fatalf("%d workers: a task did not end", workers)
			}
			o, _ := tk.Outcome()
			return o
		}

		ev := ctl.NewEvent()
		w := run("waiter", ev)
		require.Eventually(t, func() bool { return w.State() == Waiting }, time.Minute, time.Millisecond)
		require.Equal(t, Success, end(run("signaller", ev)).Kind)
		require.Equal(t, Success, end(w).Kind, "the signal in the loop woke the waiter")
		for _, name := range []string{"intr", "kept"} {
			o := end(run(name, ctl.NewEvent()))
			require.Equal(t, Success, o.Kind, "%s: %v", name, o)
		}
		m := run("many", ctl.NewEvent())
		require.Equal(t, Success, end(m).Kind)
		require.GreaterOrEqual(t, m.ex().Reductions(), uint64(1000*32), "each signal is charged as a request is (S-6)")
		d.mu.Lock()
		require.Empty(t, d.seen, "%d workers: no event request reaches the dispatcher", workers)
		require.Empty(t, d.resumed, "the parked wait is resumed without the dispatcher")
		d.mu.Unlock()

		ev = ctl.NewEvent()
		w = run("timed", ev)
		require.Eventually(t, func() bool { return w.State() == Waiting }, time.Minute, time.Millisecond)
		require.Equal(t, Success, end(run("signaller", ev)).Kind)
		require.Equal(t, Success, end(w).Kind)
		d.mu.Lock()
		require.Equal(t, []string{"event.wait"}, d.seen, "a wait a timeout bounds is a request")
		require.Equal(t, []string{"event.wait"}, d.resumed, "and is resumed by the dispatcher")
		d.seen, d.resumed = nil, nil
		d.mu.Unlock()

		o := end(run("bad", ctl.NewEvent()))
		require.Equal(t, Trapped, o.Kind, "%v", o)
		require.Equal(t, vmloop.TrapHandle, o.Trap.Code)
		d.mu.Lock()
		require.Equal(t, []string{"event.signal"}, d.seen, "a bad handle is the request's to refuse")
		d.mu.Unlock()

		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		require.Empty(t, ctl.Shutdown(ctx))
		cancel()
	}
}
