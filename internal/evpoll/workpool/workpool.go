// Package workpool is the bounded pool of goroutines on which the evpoll
// backends run blocking system calls that their OS cannot make
// asynchronous (regular-file I/O under epoll and kqueue, CreateFileW under
// IOCP), so that no caller of the backend ever blocks on them.
//
// A pool has a fixed number of workers, all started at the first job, and
// a job queue that grows as jobs are queued faster than the workers run
// them, so queueing a job never blocks. The queue needs no bound of its
// own: every job belongs to an op in its backend's slot table, which caps
// the ops in flight (MaxInFlight), and the queue's memory is what its
// peak length needs, not that cap. What a job does and how its result is
// posted back is the backend's business: the pool only runs the function
// it was given.
package workpool

import "sync"

// DefaultSize is the number of workers of a pool made with size <= 0.
const DefaultSize = 4

// Pool runs jobs of type J on a fixed number of goroutines.
type Pool[J any] struct {
	size int
	run  func(J)
	wg   sync.WaitGroup

	mu      sync.Mutex // guards the fields below
	more    sync.Cond  // signalled when a job is queued or the pool stops
	started int
	stopped bool
	// q is a ring buffer of the queued jobs: n of them from q[head],
	// wrapping around. It doubles when full and is reused, so queueing
	// allocates nothing once it has reached the peak length.
	q       []J
	head, n int
}

// New returns a pool of size workers (DefaultSize when size <= 0) that
// runs run for every job. No goroutine starts before the first Go.
func New[J any](size int, run func(J)) *Pool[J] {
	if size <= 0 {
		size = DefaultSize
	}
	p := &Pool[J]{size: size, run: run}
	p.more.L = &p.mu
	return p
}

// Size is the number of workers.
func (p *Pool[J]) Size() int { return p.size }

// Go queues j, starting all workers at the first call. It never blocks
// on the workers, and must not be called after Stop.
func (p *Pool[J]) Go(j J) {
	p.mu.Lock()
	for ; p.started < p.size; p.started++ {
		p.wg.Add(1)
		go p.work()
	}
	if p.n == len(p.q) {
		p.growLocked()
	}
	p.q[(p.head+p.n)%len(p.q)] = j
	p.n++
	p.mu.Unlock()
	p.more.Signal()
}

// growLocked doubles the ring buffer (to at least 16 jobs), keeping the
// queued jobs in order.
func (p *Pool[J]) growLocked() {
	q := make([]J, max(16, 2*len(p.q)))
	k := copy(q, p.q[p.head:])
	copy(q[k:], p.q[:p.head])
	p.q, p.head = q, 0
}

func (p *Pool[J]) work() {
	defer p.wg.Done()
	var zero J
	for {
		p.mu.Lock()
		for p.n == 0 && !p.stopped {
			p.more.Wait()
		}
		if p.n == 0 {
			p.mu.Unlock()
			return // stopped and drained
		}
		j := p.q[p.head]
		p.q[p.head] = zero // the queue keeps no reference to a taken job
		p.head = (p.head + 1) % len(p.q)
		p.n--
		p.mu.Unlock()
		p.run(j)
	}
}

// Stop ends the pool: the workers run every queued job and exit, and Stop
// returns when they have. Later calls only wait.
func (p *Pool[J]) Stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	p.more.Broadcast()
	p.wg.Wait()
}
