package sched

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
	"github.com/jadevm/jade/vmloop/jasm"
)

// TestFDTransitClosesExactlyOnce: a descriptor taken from its owner for a
// hand-over (DetachFD) is closed exactly once whichever way its transit
// ends: passed to a receiver that then ends, given back to a sender that
// lives (and ends later) or that has ended, closed as a dropped message,
// or left in transit until Shutdown. No owner's end closes it while it
// is in transit, and a stale copy cannot detach it twice.
func TestFDTransitClosesExactlyOnce(t *testing.T) {
	var mu sync.Mutex
	closes := map[int]int{}
	count := func(fd int) int {
		mu.Lock()
		defer mu.Unlock()
		return closes[fd]
	}
	_, c, err := New(Config{Workers: 1, Dispatcher: nopDispatcher{},
		CloseFD: func(fd int) {
			mu.Lock()
			closes[fd]++
			mu.Unlock()
		}})
	require.NoError(t, err)
	p, err := jasm.Assemble("r.jasm", []byte(".func f() -> i64\n  .local n:i64\n  const n, 0\n  ret n\n.end\n"))
	require.NoError(t, err)
	require.NoError(t, vmloop.Verify(p, nil))
	e, err := c.RegisterEngine("e", EngineRuntimeConfig{})
	require.NoError(t, err)
	require.NoError(t, c.Start())
	task := func() *Task {
		tk, err := c.Prepare(nil, e, p, 0, nil)
		require.NoError(t, err)
		return tk
	}
	run := func(tk *Task) {
		c.Launch(nil, tk)
		select {
		case <-tk.Done():
		case <-time.After(time.Minute):
			t.Fatalf("task %d did not end", tk.ID())
		}
	}

	// Passed to a receiver: the sender's end leaves it, the receiver's
	// closes it.
	snd, rcv := task(), task()
	f := c.NewFD(snd, 2001)
	ok, _ := c.DetachFD(snd, f)
	require.True(t, ok)
	owns, owner := f.OwnedBy(snd)
	require.False(t, owns)
	require.Zero(t, owner)
	require.True(t, f.Detached())
	ok, _ = c.DetachFD(snd, f) // a stale copy
	require.False(t, ok)
	require.Equal(t, 1, c.inTransit())
	run(snd)
	require.Zero(t, count(2001), "the sender's end closed a descriptor in transit")
	c.PassFD(rcv, f)
	require.False(t, f.Detached())
	ok, owner = c.DetachFD(snd, f)
	require.False(t, ok)
	require.Equal(t, rcv.ID(), owner)
	run(rcv)
	require.Equal(t, 1, count(2001))

	// Given back to a live sender, which owns it again.
	snd = task()
	f = c.NewFD(snd, 2002)
	ok, _ = c.DetachFD(snd, f)
	require.True(t, ok)
	c.ReturnFD(f)
	owns, _ = f.OwnedBy(snd)
	require.True(t, owns)
	run(snd)
	require.Equal(t, 1, count(2002))

	// Given back to a sender that has ended: closed.
	snd = task()
	f = c.NewFD(snd, 2003)
	ok, _ = c.DetachFD(snd, f)
	require.True(t, ok)
	run(snd)
	c.ReturnFD(f)
	require.Equal(t, 1, count(2003))
	c.CloseFD(f)
	c.ReturnFD(f)
	require.Equal(t, 1, count(2003))

	// Dropped unreceived: closed; a late pass does not revive it.
	snd, rcv = task(), task()
	f = c.NewFD(snd, 2004)
	ok, _ = c.DetachFD(snd, f)
	require.True(t, ok)
	c.CloseFD(f)
	c.PassFD(rcv, f)
	run(snd)
	run(rcv)
	require.Equal(t, 1, count(2004))

	// Still in transit at Shutdown: closed then.
	snd = task()
	f = c.NewFD(snd, 2005)
	ok, _ = c.DetachFD(snd, f)
	require.True(t, ok)
	run(snd)
	require.Zero(t, count(2005))
	require.Equal(t, 1, c.inTransit())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.Empty(t, c.Shutdown(ctx))
	require.Equal(t, 1, count(2005))
	require.Zero(t, c.inTransit())
	for fd := 2001; fd <= 2005; fd++ {
		require.Equal(t, 1, count(fd), "fd %d", fd)
	}
}
