// Package workpool is the bounded pool of goroutines on which the evpoll
// backends run blocking system calls that their OS cannot make
// asynchronous (regular-file I/O under epoll and kqueue, CreateFileW under
// IOCP), so that no caller of the backend ever blocks on them.
//
// A pool has a fixed number of workers, all started at the first job, and
// a job queue of fixed capacity. Backends size the queue to their slot
// table (MaxInFlight), which already caps the jobs in flight, so queueing
// a job never blocks. What a job does and how its result is posted back is
// the backend's business: the pool only runs the function it was given.
package workpool

import "sync"

// DefaultSize is the number of workers of a pool made with size <= 0.
const DefaultSize = 4

// Pool runs jobs of type J on a fixed number of goroutines.
type Pool[J any] struct {
	size    int
	started int // guarded by the caller's mutex, see Go
	jobs    chan J
	run     func(J)
	wg      sync.WaitGroup
	once    sync.Once
}

// New returns a pool of size workers (DefaultSize when size <= 0) that
// runs run for every job; at most capacity jobs may be queued. No
// goroutine starts before the first Go.
func New[J any](size, capacity int, run func(J)) *Pool[J] {
	if size <= 0 {
		size = DefaultSize
	}
	return &Pool[J]{size: size, jobs: make(chan J, capacity), run: run}
}

// Size is the number of workers.
func (p *Pool[J]) Size() int { return p.size }

// Go queues j, starting all workers at the first call. Calls must be
// serialized by the caller (backends hold their mutex) and must not come
// after Stop; Go blocks only when capacity jobs are already queued.
func (p *Pool[J]) Go(j J) {
	for ; p.started < p.size; p.started++ {
		p.wg.Add(1)
		go p.work()
	}
	p.jobs <- j
}

func (p *Pool[J]) work() {
	defer p.wg.Done()
	for j := range p.jobs {
		p.run(j)
	}
}

// Stop closes the job queue and waits until the workers have run every
// queued job and exited. Later calls only wait.
func (p *Pool[J]) Stop() {
	p.once.Do(func() { close(p.jobs) })
	p.wg.Wait()
}
