package chans

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
)

func msg(t *testing.T, v int64, mem *vmloop.Budget) *Msg {
	t.Helper()
	m, _, ok := NewMsg(vmloop.I64(v), mem)
	require.True(t, ok)
	return m
}

// TestRingAndFifo: the ring keeps FIFO order across growth and
// pushFront; the waiter queue drops stale entries at its limit and
// keeps at most max(16, 2 × live).
func TestRingAndFifo(t *testing.T) {
	var r ring
	for i := 0; i < 100; i++ {
		r.push(&Msg{kind: vmloop.KindI64, bits: uint64(i)})
	}
	front := &Msg{kind: vmloop.KindI64, bits: 1 << 63}
	r.pushFront(front)
	m, _ := r.pop()
	require.Same(t, front, m)
	for i := 0; i < 100; i++ {
		m, ok := r.pop()
		require.True(t, ok)
		require.Equal(t, int64(i), m.Value().Int())
	}
	_, ok := r.pop()
	require.False(t, ok)

	var q fifo[int]
	dropped := 0
	live := func(x int) bool { return x%10 == 0 }
	for i := 0; i < 1000; i++ {
		q.push(i, live, func(int) { dropped++ })
		require.LessOrEqual(t, len(q.s)-q.head, max(minCompact, 2*(i/10+1))+1)
	}
	require.Positive(t, dropped)
}

// TestBudgetBalance: every byte a message charges comes back, whether it
// is received, dropped by a close of its waiting sender, or left in a
// channel that becomes unreachable.
func TestBudgetBalance(t *testing.T) {
	mem := vmloop.NewBudget(1 << 30)
	c, err := New(ElemI64, 2)
	require.NoError(t, err)
	for i := 0; i < 2; i++ {
		require.NoError(t, c.SendHost(msg(t, int64(i), mem), nil))
	}
	require.Equal(t, 2*msgOverhead, mem.Used())
	require.Equal(t, 2*msgOverhead, c.HeldBytes())
	// A third send waits; a close ends it unsent and gives its bytes back.
	done := make(chan error)
	go func() { done <- c.SendHost(msg(t, 2, mem), nil) }()
	require.Eventually(t, func() bool { return mem.Used() == 3*msgOverhead }, 5*time.Second, time.Millisecond)
	require.NoError(t, c.Close(nil))
	require.ErrorIs(t, <-done, ErrClosed)
	require.Equal(t, 2*msgOverhead, mem.Used())
	for i := 0; i < 2; i++ {
		m, err := c.RecvHost(nil)
		require.NoError(t, err)
		require.Equal(t, int64(i), m.Value().Int())
		m.Release()
	}
	_, err = c.RecvHost(nil)
	require.ErrorIs(t, err, ErrClosed)
	require.Zero(t, mem.Used())
	require.Zero(t, c.HeldBytes())

	// Left in an unreachable channel: the cleanup gives the bytes back.
	func() {
		d, err := New(ElemI64, 4)
		require.NoError(t, err)
		require.NoError(t, d.SendHost(msg(t, 1, mem), nil))
	}()
	require.Eventually(t, func() bool { runtime.GC(); return mem.Used() == 0 }, 5*time.Second, 10*time.Millisecond)

	// A budget that refuses: nothing is charged.
	small := vmloop.NewBudget(msgOverhead)
	_, _, ok := NewMsg(vmloop.I64(1), small)
	require.True(t, ok)
	_, n, ok := NewMsg(vmloop.I64(1), small)
	require.False(t, ok)
	require.Equal(t, msgOverhead, n)
	require.Equal(t, msgOverhead, small.Used())
}

// TestHostRendezvous: host goroutines through a capacity-0 channel, with
// receivers that give up on their contexts: every value sent is received
// exactly once, none that gave up was taken.
func TestHostRendezvous(t *testing.T) {
	c, err := New(ElemI64, 0)
	require.NoError(t, err)
	const n = 2000
	var wg sync.WaitGroup
	got := make(chan int64, n)
	var sentOK sync.Map
	for s := 0; s < 4; s++ {
		wg.Add(1)
		go func(s int) {
			defer wg.Done()
			for i := s; i < n; i += 4 {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%3)*50*time.Microsecond)
				if err := c.SendHost(msg(t, int64(i), nil), ctx.Done()); err == nil {
					sentOK.Store(int64(i), true)
				} else if !errors.Is(err, ErrGaveUp) {
					t.Error(err)
				}
				cancel()
			}
		}(s)
	}
	var rg sync.WaitGroup
	for r := 0; r < 4; r++ {
		rg.Add(1)
		go func() {
			defer rg.Done()
			for {
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Microsecond)
				m, err := c.RecvHost(ctx.Done())
				cancel()
				switch {
				case errors.Is(err, ErrClosed):
					return
				case errors.Is(err, ErrGaveUp):
					continue
				}
				require.NoError(t, err)
				got <- m.Value().Int()
			}
		}()
	}
	wg.Wait()
	require.NoError(t, c.Close(nil))
	rg.Wait()
	close(got)
	seen := map[int64]bool{}
	for v := range got {
		require.False(t, seen[v], "%d twice", v)
		_, ok := sentOK.Load(v)
		require.True(t, ok, "%d received but its send gave up", v)
		seen[v] = true
	}
	sentOK.Range(func(k, _ any) bool {
		require.True(t, seen[k.(int64)], "%d sent but not received", k)
		return true
	})
}

func TestNewRefusesBadInput(t *testing.T) {
	_, err := New(ElemI64, -1)
	require.ErrorIs(t, err, ErrNegativeCap)
	_, err = New(Elem(9), 1)
	require.Error(t, err)
}
