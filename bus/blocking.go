package bus

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// Blocking host calls.
//
// A host function registered with RegisterBlockingIntrinsic may block (a
// database driver, DNS, a file system, an RPC client): it never runs on a
// worker. The calling task is suspended (Call.Suspend), the call goes to
// the bus's blocking pool — at most Config.BlockingPool of them run at
// once, the others wait their turn in arrival order, each on a goroutine
// parked on the pool's semaphore — and the worker runs other tasks. An
// engine's calls queued or running are bounded by its blockingCalls limit;
// one more throws a catchable ResourceError at once. A call's arguments,
// copied out of the task's heap, count in the engine's memory budget
// until the call ends (Value.HostBytes); arguments that do not fit throw
// a catchable ResourceError at once too.
//
// The function gets a context that is cancelled when the calling task
// ends (cancelled, or killed by Shutdown): a task cancelled mid-call ends
// Cancelled and the call's result is dropped; one cancelled while its
// call waits for a place ends at once, and the call never runs. A
// time.timeout on the wait ends it with a TimeoutError and cancels that
// call's context (each call has its own, found through the task's id only
// while it is the task's current call); a result that comes anyway is
// dropped, and a call that timed out while it waited for a place gives up
// its turn and never runs. A panic traps the calling task only, as for
// any host intrinsic.

// DefaultBlockingPool is the number of blocking host calls that run at
// once (Config.BlockingPool).
const DefaultBlockingPool = 64

// BlockingFunc implements a blocking host intrinsic: it gets the
// arguments and a context cancelled when the calling task ends, and
// returns the result, or an error thrown in the task as a HostError.
type BlockingFunc func(ctx context.Context, args []vmloop.Value) (vmloop.Value, error)

// BlockingStats are the counters of the blocking pool.
type BlockingStats struct {
	Pool    int   `json:"pool"`    // calls that may run at once
	Queued  int64 `json:"queued"`  // calls waiting for a place now
	Running int64 `json:"running"` // calls running now
	Calls   int64 `json:"calls"`   // calls ended so far
	// WaitNanos and RunNanos sum the ended calls' wait for a place and
	// their run time.
	WaitNanos int64 `json:"waitNanos"`
	RunNanos  int64 `json:"runNanos"`
}

// blockingPool runs blocking host calls, at most cap(sem) at once.
// cancels maps the id of a task waiting for its call to that call's
// blockingCall, so that a timeout of the wait cancels the call too
// (cancelTimedOut). Invariant: an entry is removed only by the call it
// names (CompareAndDelete at the call's end) or by the timeout of that
// call's wait: a call of the same task that timed out earlier and ends
// late must not remove a later call's entry.
type blockingPool struct {
	cancels                sync.Map // task id (uint64) → *blockingCall
	sem                    chan struct{}
	queued, running, calls atomic.Int64
	waitNanos, runNanos    atomic.Int64
}

// blockingCall is one call in the pool: its entry in blockingPool.cancels
// is this pointer, so that the call's end removes its own entry only.
// state goes from callQueued to callRunning (the pool goroutine, as it
// calls the host function) or to callAbandoned (the task's wait timed out
// or the task ended first), once: a call abandoned while queued never
// runs, even when it got a place in the same instant.
type blockingCall struct {
	cancel context.CancelFunc
	state  atomic.Int32
}

// blockingCall states.
const (
	callQueued int32 = iota
	callRunning
	callAbandoned
)

// abandon gives up the call for its task: a queued call will not run; a
// running one sees its context cancelled.
func (c *blockingCall) abandon() {
	c.state.CompareAndSwap(callQueued, callAbandoned)
	c.cancel()
}

func newBlockingPool(n int) *blockingPool {
	if n <= 0 {
		n = DefaultBlockingPool
	}
	return &blockingPool{sem: make(chan struct{}, n)}
}

// BlockingStats returns the blocking pool's counters.
func (b *Bus) BlockingStats() BlockingStats {
	p := b.blocking
	return BlockingStats{Pool: cap(p.sem), Queued: p.queued.Load(), Running: p.running.Load(),
		Calls: p.calls.Load(), WaitNanos: p.waitNanos.Load(), RunNanos: p.runNanos.Load()}
}

// RegisterBlockingIntrinsic is RegisterIntrinsic for a host function that
// may block: it runs on the bus's blocking pool, never on a worker (see
// above).
func (b *Bus) RegisterBlockingIntrinsic(name string, params []vmloop.Type, result vmloop.Type, need Capability, fn BlockingFunc) error {
	if fn == nil {
		return fmt.Errorf("bus: register intrinsic %q: nil function", name)
	}
	return b.register(name, params, result, need, nil, fn)
}

// startBlocking suspends the calling task of c and hands the call to the
// pool; a full engine limit throws a ResourceError instead. It runs
// under callHost's timedWait (time.timeout bounds the wait).
func (b *Bus) startBlocking(c *Call, ex *vmloop.Exec, req *vmloop.Request, h *hostIntrinsic) sched.Action {
	e := c.t.Engine()
	if err := b.ctl.ReserveBlocking(e); err != nil {
		return raise(ex, vmloop.Err(vmloop.ErrKindResource, fmt.Sprintf("%s: %v", h.desc.Name, err)))
	}
	// The copied arguments live until the call ends, queued or running:
	// they count in the engine's memory budget for as long (the copy was
	// counted only while it was made).
	var argBytes int64
	for _, v := range c.args {
		argBytes += v.HostBytes()
	}
	if err := b.ctl.ReserveMemory(e, argBytes, "the arguments of a blocking host call"); err != nil {
		b.ctl.ReleaseBlocking(e)
		c.args = nil
		return raise(ex, vmloop.Err(vmloop.ErrKindResource, fmt.Sprintf("%s: %v", h.desc.Name, err)))
	}
	done := c.t.Done() // this life's channel: the record may be reused once the task ends
	comp := c.Suspend()
	ctx, cancel := context.WithCancel(context.Background())
	p := b.blocking
	id := c.id
	call := &blockingCall{cancel: cancel}
	p.cancels.Store(id, call)
	ended := make(chan struct{})
	go func() { // cancels the call's context when the task ends first
		select {
		case <-done:
			call.abandon()
		case <-ended:
		}
	}()
	p.queued.Add(1)
	queuedAt := time.Now()
	go func() {
		defer close(ended)
		defer cancel()
		defer p.cancels.CompareAndDelete(id, call)
		defer b.ctl.ReleaseBlocking(e)
		defer func() {
			c.args = nil // the host function may keep them; the call does not
			b.ctl.ReleaseMemory(e, argBytes)
		}()
		select {
		case p.sem <- struct{}{}:
		case <-ctx.Done():
			// The task ended, or its wait timed out, while the call waited
			// for a place: it gives up its turn and never runs.
			p.queued.Add(-1)
			p.calls.Add(1)
			p.waitNanos.Add(int64(time.Since(queuedAt)))
			return
		}
		p.queued.Add(-1)
		p.running.Add(1)
		start := time.Now()
		p.waitNanos.Add(int64(start.Sub(queuedAt)))
		defer func() {
			<-p.sem
			p.running.Add(-1)
			p.calls.Add(1)
			p.runNanos.Add(int64(time.Since(start)))
		}()
		select {
		case <-done:
			call.abandon() // the task ended while the call waited for a place
		default:
		}
		if !call.state.CompareAndSwap(callQueued, callRunning) {
			return // abandoned while it waited for a place: it never runs
		}
		b.runBlocking(ctx, c, h, comp)
	}()
	return sched.ActSuspend // callHost's timedWait arms time.timeout
}

// runBlocking runs the host function of a blocking call and completes its
// task with the result, the error (a HostError) or, on a panic, a trap.
func (b *Bus) runBlocking(ctx context.Context, c *Call, h *hostIntrinsic, comp *Completion) {
	defer func() {
		if r := recover(); r != nil {
			b.reportPanic(HostPanic{Intrinsic: h.desc.Name, TaskID: c.id, Engine: c.engine, Value: r, Stack: debug.Stack()})
			ti := vmloop.TrapInfo{Code: vmloop.TrapHostPanic, Msg: fmt.Sprintf("%s panicked: %s", h.desc.Name, panicText(r))}
			b.ctl.CompleteHost(comp.tok, vmloop.Void(), nil, &ti)
		}
	}()
	v, err := h.blocking(ctx, c.args)
	if err != nil {
		comp.Fail(fmt.Errorf("%s: %w", h.desc.Name, err))
		return
	}
	if h.desc.Result == vmloop.TVoid {
		v = vmloop.Void()
	}
	comp.Complete(v)
}

// cancelTimedOut cancels the blocking call of task id, whose wait for it
// has timed out (its result would be dropped).
func (b *Bus) cancelTimedOut(id uint64) {
	if f, ok := b.blocking.cancels.LoadAndDelete(id); ok {
		f.(*blockingCall).abandon()
	}
}
