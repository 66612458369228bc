package sched

import (
	"context"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/vmloop"
	"github.com/jadevm/jade/vmloop/jasm"
)

// slowCancelBackend holds every op until it is cancelled, and returns a
// cancelled op's completion only cancelDelay after the Cancel, as a
// kernel's asynchronous cancel may. Close counts what it discards.
type slowCancelBackend struct {
	mu        sync.Mutex
	next      evpoll.OpID
	pending   map[evpoll.OpID]evpoll.Token
	done      []delayedCompletion
	woken     bool
	discarded int // ops held at Close; guarded by mu
}

type delayedCompletion struct {
	c  evpoll.Completion
	at time.Time
}

const cancelDelay = 50 * time.Millisecond

func (b *slowCancelBackend) Name() string { return "slow-cancel" }

func (b *slowCancelBackend) Submit(_ *evpoll.Op, tok evpoll.Token) (evpoll.OpID, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.next++
	b.pending[b.next] = tok
	return b.next, nil
}

func (b *slowCancelBackend) Cancel(id evpoll.OpID) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	tok, ok := b.pending[id]
	if !ok {
		return evpoll.ErrNotPending
	}
	delete(b.pending, id)
	c := evpoll.Completion{Token: tok, Res: -int32(syscall.ECANCELED), Flags: evpoll.FlagCancelled}
	b.done = append(b.done, delayedCompletion{c, time.Now().Add(cancelDelay)})
	return nil
}

func (b *slowCancelBackend) Wait(timeout time.Duration, out []evpoll.Completion) (int, error) {
	end := time.Now().Add(timeout)
	for {
		b.mu.Lock()
		n := 0
		for len(b.done) > 0 && n < len(out) && !time.Now().Before(b.done[0].at) {
			out[n] = b.done[0].c
			b.done = b.done[1:]
			n++
		}
		woken := b.woken
		b.woken = false
		b.mu.Unlock()
		if n > 0 || woken || timeout == 0 || (timeout > 0 && time.Now().After(end)) {
			return n, nil
		}
		time.Sleep(200 * time.Microsecond)
	}
}

func (b *slowCancelBackend) Wake() error {
	b.mu.Lock()
	b.woken = true
	b.mu.Unlock()
	return nil
}

func (b *slowCancelBackend) Pending() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.pending) + len(b.done)
}

func (b *slowCancelBackend) Stats() evpoll.Stats { return evpoll.Stats{} }

func (b *slowCancelBackend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.discarded += len(b.pending) + len(b.done)
	return nil
}

// readDispatcher answers every intrinsic with a Recv on a new FD the task
// owns (number 1000 + the task's id), which parks the task until the op
// completes.
type readDispatcher struct{ c *Control }

func (d *readDispatcher) Intrinsic(t *Task, _ *vmloop.Request) Action {
	num := 1000 + int(t.ID())
	f := d.c.NewFD(t, num)
	op := d.c.IOOp(t, evpoll.Op{Kind: evpoll.Recv, Fd: num, Buf: make([]byte, 1), Offset: -1})
	if err := d.c.SubmitIO(t, op, f); err != nil {
		return ActTrapped
	}
	return ActSuspend
}
func (d *readDispatcher) Resume(*Task, *vmloop.Request) Action { return ActTrapped }
func (d *readDispatcher) Abandon(*Task, *vmloop.Request, bool) {}

// TestStopReapsCancelledIO: Shutdown cancels tasks parked in reads whose
// cancelled completions come back 50 ms later; the workers reap them
// before they close their backends, so every FD is closed (its close left
// to the read's completion) and no backend discards an op.
func TestStopReapsCancelledIO(t *testing.T) {
	for _, workers := range []int{1, 2} {
		const tasks = 20
		var mu sync.Mutex
		closed := map[int]bool{}
		var backends []*slowCancelBackend
		d := &readDispatcher{}
		_, c, err := New(Config{Workers: workers, Dispatcher: d,
			OpenIO: func(int) (evpoll.Backend, error) {
				b := &slowCancelBackend{pending: map[evpoll.OpID]evpoll.Token{}}
				mu.Lock()
				backends = append(backends, b)
				mu.Unlock()
				return b, nil
			},
			CloseFD: func(fd int) {
				mu.Lock()
				closed[fd] = true
				mu.Unlock()
			}})
		require.NoError(t, err)
		d.c = c
		p, err := jasm.Assemble("r.jasm", []byte(".func f() -> i64\n  .local n:i64\n  cancelled n\n  const n, 0\n  ret n\n.end\n"))
		require.NoError(t, err)
		require.NoError(t, vmloop.Verify(p, nil))
		e, err := c.RegisterEngine("e", EngineRuntimeConfig{})
		require.NoError(t, err)
		require.NoError(t, c.Start())
		var ids []int
		for range tasks {
			tk, err := c.Prepare(nil, e, p, 0, nil)
			require.NoError(t, err)
			ids = append(ids, 1000+int(tk.ID()))
			c.Launch(nil, tk)
		}
		require.Eventually(t, func() bool { return e.InFlightIO() == tasks },
			time.Minute, time.Millisecond, "every task parked in its read")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		require.Empty(t, c.Shutdown(ctx))
		cancel()
		mu.Lock()
		for _, num := range ids {
			require.True(t, closed[num], "workers=%d: fd %d not closed at Shutdown", workers, num)
		}
		for i, b := range backends {
			require.Zero(t, b.discarded, "workers=%d: backend %d discarded ops at Close", workers, i)
		}
		mu.Unlock()
	}
}
