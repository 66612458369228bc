package sched

import (
	"sync"
	"sync/atomic"
)

// injectQueue is the global FIFO for tasks made runnable outside a worker
// (host spawns, host wakes) and for local-queue overflow. It is an
// intrusive list through Task.link (Task.qnext) behind a mutex; n lets workers look at
// it without taking the lock.
type injectQueue struct {
	mu         sync.Mutex
	head, tail *Task // guarded by mu
	n          atomic.Int64
}

func (q *injectQueue) push(t *Task) {
	q.mu.Lock()
	t.link = nil
	if q.tail == nil {
		q.head = t
	} else {
		q.tail.setQnext(t)
	}
	q.tail = t
	q.n.Add(1)
	q.mu.Unlock()
}

// pushList appends a chain first..last of n tasks.
func (q *injectQueue) pushList(first, last *Task, n int64) {
	q.mu.Lock()
	last.link = nil
	if q.tail == nil {
		q.head = first
	} else {
		q.tail.setQnext(first)
	}
	q.tail = last
	q.n.Add(n)
	q.mu.Unlock()
}

func (q *injectQueue) pop() *Task {
	if q.n.Load() == 0 {
		return nil
	}
	q.mu.Lock()
	t := q.head
	if t != nil {
		q.head = t.qnext()
		if q.head == nil {
			q.tail = nil
		}
		t.link = nil
		q.n.Add(-1)
	}
	q.mu.Unlock()
	return t
}

func (q *injectQueue) len() int64 { return q.n.Load() }

// popBatch takes up to max tasks under one lock: it returns the first and
// pushes the others onto dst, the caller's own local queue, which must
// have room for them (a worker pulling from the inject queue takes its
// share at once instead of one lock round trip per task, as Tokio does).
func (q *injectQueue) popBatch(dst *localQueue, max int) *Task {
	if q.n.Load() == 0 {
		return nil
	}
	q.mu.Lock()
	first := q.head
	if first == nil {
		q.mu.Unlock()
		return nil
	}
	n := 1
	last := first
	for n < max && last.link != nil {
		last = last.qnext()
		n++
	}
	q.head = last.qnext()
	if q.head == nil {
		q.tail = nil
	}
	last.link = nil
	q.n.Add(-int64(n))
	q.mu.Unlock()
	t := first.qnext()
	first.link = nil
	for t != nil {
		next := t.qnext()
		t.link = nil
		dst.push(t, q)
		t = next
	}
	return first
}
