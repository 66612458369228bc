package sched

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReapGoesBehindInjectQueue: a task woken by a reap of completions
// while runnable tasks wait in the inject queue goes behind them, not onto
// the local queue ahead of them (under a load that keeps completions
// coming, a worker refilled its local queue from every reap and the
// overflowed tasks in the inject queue waited for tens of milliseconds:
// echo_proc_1000). Outside a reap, or with the inject queue empty, a wake
// between tasks goes to the local queue.
func TestReapGoesBehindInjectQueue(t *testing.T) {
	s := &Scheduler{}
	w := &worker{s: s}
	s.workers = []*worker{w}
	older, reaped, later, between := &Task{id: 1}, &Task{id: 2}, &Task{id: 3}, &Task{id: 4}

	s.inject.push(older)
	w.reaping = true
	s.enqueue(w, reaped)
	require.Zero(t, w.local.len(), "a reap with the inject queue holding a task")
	require.Same(t, older, s.inject.pop())
	require.Same(t, reaped, s.inject.pop())

	s.enqueue(w, later) // inject queue empty now
	w.reaping = false
	s.inject.push(older)
	s.enqueue(w, between) // not a reap
	require.Equal(t, 2, int(w.local.len()))
	require.Same(t, later, w.local.pop())
	require.Same(t, between, w.local.pop())
	require.Same(t, older, s.inject.pop())
}
