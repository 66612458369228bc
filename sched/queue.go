package sched

import (
	"sync"
	"sync/atomic"
)

// injectQueue is the global FIFO for tasks made runnable outside a worker
// (host spawns, host wakes) and for local-queue overflow. It is an
// intrusive list through Task.next behind a mutex; n lets workers look at
// it without taking the lock.
type injectQueue struct {
	mu         sync.Mutex
	head, tail *Task // guarded by mu
	n          atomic.Int64
}

func (q *injectQueue) push(t *Task) {
	q.mu.Lock()
	t.next = nil
	if q.tail == nil {
		q.head = t
	} else {
		q.tail.next = t
	}
	q.tail = t
	q.n.Add(1)
	q.mu.Unlock()
}

// pushList appends a chain first..last of n tasks.
func (q *injectQueue) pushList(first, last *Task, n int64) {
	q.mu.Lock()
	last.next = nil
	if q.tail == nil {
		q.head = first
	} else {
		q.tail.next = first
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
		q.head = t.next
		if q.head == nil {
			q.tail = nil
		}
		t.next = nil
		q.n.Add(-1)
	}
	q.mu.Unlock()
	return t
}

func (q *injectQueue) len() int64 { return q.n.Load() }
